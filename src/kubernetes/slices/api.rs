//! ResourceSlice objects as the API server writes them, read with a cap on
//! every list so a hostile file cannot make llmgw hold more than it reads.

use super::*;

#[derive(Deserialize)]
pub(super) struct Slice {
    #[serde(default)]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) spec: SliceSpec,
}

impl Kinded for Slice {
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct SliceSpec {
    #[serde(default)]
    pub(super) driver: String,
    pub(super) node_name: Option<String>,
    #[serde(default)]
    pub(super) pool: Pool,
    #[serde(default)]
    pub(super) devices: Capped,
}

/// A slice's devices, refused past the API's limit while they are read.
#[derive(Default)]
pub(super) struct Capped(pub(super) Vec<Device>);

impl<'de> Deserialize<'de> for Capped {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Capped, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Capped;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a list of at most {MAX_SLICE_DEVICES} devices")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Capped, A::Error> {
                let mut out = Vec::new();
                while let Some(d) = seq.next_element::<Device>()? {
                    if out.len() == MAX_SLICE_DEVICES {
                        return Err(serde::de::Error::custom(format!(
                            "spec.devices holds more than {MAX_SLICE_DEVICES} devices, the most the API lets a ResourceSlice hold"
                        )));
                    }
                    out.push(d);
                }
                Ok(Capped(out))
            }
            fn visit_unit<E>(self) -> Result<Capped, E> {
                Ok(Capped::default())
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct Pool {
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) generation: i64,
    #[serde(default = "one")]
    pub(super) resource_slice_count: i64,
}

pub(super) fn one() -> i64 {
    1
}

#[derive(Deserialize, Default, Clone)]
pub(crate) struct Device {
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) attributes: BTreeMap<String, Attribute>,
    #[serde(default)]
    pub(super) capacity: BTreeMap<String, Capacity>,
    /// `v1beta1`: the attributes and capacity one level down.
    pub(super) basic: Option<Box<Device>>,
    /// A place a device could be made in (DynamicMIG), not a device.
    #[serde(default, rename = "consumesCounters")]
    pub(super) consumes_counters: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize, Default, Clone)]
pub(super) struct Attribute {
    pub(super) string: Option<String>,
    pub(super) version: Option<String>,
    pub(super) int: Option<i64>,
}

/// `{value: "40Gi"}`, or a bare quantity (the alpha shape).
#[derive(Deserialize, Clone)]
#[serde(untagged)]
pub(super) enum Capacity {
    Value { value: crate::import::file::Text },
    Plain(crate::import::file::Text),
}

impl Device {
    pub(super) fn attr(&self, key: &str) -> Option<&Attribute> {
        self.attributes.get(key).or_else(|| self.basic.as_ref()?.attributes.get(key))
    }

    pub(super) fn attribute(&self, key: &str) -> Option<&str> {
        let own = self.attr(key)?;
        own.string.as_deref().or(own.version.as_deref())
    }

    pub(super) fn capacity(&self) -> impl Iterator<Item = (&String, &Capacity)> {
        self.capacity.iter().chain(self.basic.iter().flat_map(|b| b.capacity.iter()))
    }

    /// The memory quantity as published, when there is one.
    pub(super) fn memory_text(&self) -> Option<&str> {
        self.capacity().find(|(k, _)| *k == "memory").map(|(_, c)| match c {
            Capacity::Value { value } | Capacity::Plain(value) => value.0.as_str(),
        })
    }

    /// Where the device sits on the PCI bus: the standard attribute, else
    /// the driver's older spelling.
    pub(super) fn pci_bus_id(&self) -> Option<&str> {
        self.attribute("resource.kubernetes.io/pciBusID").or_else(|| self.attribute("pcieBusID"))
    }

    /// The kernel minor number the driver names a GPU by (`gpu-3`, and
    /// its MIG devices `gpu-3-mig-...`), else its `minor` attribute (the
    /// driver's releases before 25.8). It does not change when another
    /// GPU of the node stops being published, as a position would.
    pub(super) fn minor(&self) -> Option<u32> {
        let rest = self.name.strip_prefix("gpu-")?;
        let digits = rest.split('-').next().unwrap_or_default();
        digits.parse().ok().or_else(|| self.attr("minor")?.int.and_then(|i| u32::try_from(i).ok()))
    }

    /// Where a MIG device starts among its GPU's memory slices: unique on
    /// the GPU while the device exists, whatever else is published. From
    /// its `memorySliceN` capacities, else its name (`gpu-0-mig-19-3-1`:
    /// profile 19, start 3, size 1; `gpu-0-mig-1g10gb-19-3`: start 3).
    pub(super) fn mig_start(&self) -> Option<u32> {
        let from_capacity =
            self.capacity().filter_map(|(k, _)| k.strip_prefix("memorySlice")?.parse::<u32>().ok()).min();
        if from_capacity.is_some() {
            return from_capacity;
        }
        let (_, tail) = self.name.split_once("-mig-")?;
        let parts: Vec<&str> = tail.split('-').collect();
        let numeric = |p: &str| p.parse::<u32>().ok();
        match parts.as_slice() {
            [id, start, _size] if numeric(id).is_some() => numeric(start),
            [.., last] => numeric(last),
            [] => None,
        }
    }
}
