//! The inventory's fields, described once: their names, types and
//! defaults, as serde structs. The fast path deserialises straight into
//! them; the spanned decoder takes its lists of known fields from them
//! (`names`), so a field added here is known to both.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInventory {
    #[serde(default)]
    pub node: Vec<RawNode>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNode {
    pub id: String,
    #[serde(default, deserialize_with = "some")]
    pub discovered_by: Option<String>,
    #[serde(default, deserialize_with = "some")]
    pub state: Option<String>,
    #[serde(default)]
    pub labels: UniqueMap,
    #[serde(default)]
    pub taints: Vec<String>,
    #[serde(default)]
    pub memory_total_mb: u64,
    #[serde(default, deserialize_with = "some")]
    pub memory_allocatable_mb: Option<u64>,
    #[serde(default, deserialize_with = "some")]
    pub cpus: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub engines: Option<UniqueMap>,
    #[serde(default, deserialize_with = "some")]
    pub weights: Option<Vec<RawWeight>>,
    #[serde(default, deserialize_with = "some")]
    pub disk: Option<RawDisk>,
    #[serde(default)]
    pub gpu: Vec<RawGpu>,
    #[serde(default)]
    pub fabric: Vec<RawFabric>,
    #[serde(default)]
    pub allocation: Vec<RawAlloc>,
}

/// A weights entry: a source, or `{ source, path }`.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum RawWeight {
    Source(String),
    At(RawWeightAt),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWeightAt {
    pub source: String,
    pub path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDisk {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub free_bytes: u64,
    #[serde(default)]
    pub total_bytes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGpu {
    pub index: u32,
    pub name: String,
    #[serde(default, deserialize_with = "some")]
    pub vendor: Option<String>,
    #[serde(default)]
    pub memory_mb: u64,
    #[serde(default, deserialize_with = "some")]
    pub uuid: Option<String>,
    #[serde(default, deserialize_with = "some")]
    pub dra_device: Option<String>,
    #[serde(default, deserialize_with = "some")]
    pub pci_bus_id: Option<String>,
    #[serde(default, deserialize_with = "some")]
    pub mig: Option<bool>,
    #[serde(default, deserialize_with = "some")]
    pub class: Option<String>,
    /// u32 like a GPU index: a larger number is no GPU of the node, and
    /// fails here so the spanned path can say so.
    #[serde(default)]
    pub nvlink_peers: Vec<u32>,
    #[serde(default = "yes")]
    pub healthy: bool,
    #[serde(default)]
    pub mig_device: Vec<RawMig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMig {
    pub index: u32,
    pub profile: String,
    #[serde(default)]
    pub memory_mb: u64,
    #[serde(default, deserialize_with = "some")]
    pub uuid: Option<String>,
    #[serde(default, deserialize_with = "some")]
    pub dra_device: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFabric {
    pub name: String,
    #[serde(default)]
    pub kind: super::FabricKind,
    #[serde(default, deserialize_with = "some")]
    pub hcas: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlloc {
    pub model: String,
    pub replica: u32,
    #[serde(default)]
    pub gpus: Vec<u32>,
    #[serde(default)]
    pub mig_devices: Vec<u32>,
    #[serde(default, deserialize_with = "some")]
    pub cpus: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub memory_mb: Option<u64>,
    #[serde(default, deserialize_with = "some")]
    pub profile: Option<String>,
    #[serde(default)]
    pub pending: bool,
    #[serde(default, deserialize_with = "some")]
    pub job: Option<u64>,
}

fn yes() -> bool {
    true
}

/// Present means a value: `null` is refused, as the spanned path refuses it.
fn some<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A string-to-string table that refuses a key given twice (serde's maps
/// keep the last silently).
#[derive(Default)]
pub struct UniqueMap(pub BTreeMap<String, String>);

impl<'de> Deserialize<'de> for UniqueMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = UniqueMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<UniqueMap, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = m.next_entry::<String, String>()? {
                    if out.insert(k, v).is_some() {
                        return Err(de::Error::custom("duplicate key"));
                    }
                }
                Ok(UniqueMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The field names of a struct, as serde reads them: asked of its
/// `Deserialize` impl by a deserializer that only listens.
pub fn names<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Listen(Option<&'static [&'static str]>);
    impl<'de> Deserializer<'de> for &mut Listen {
        type Error = de::value::Error;
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = Some(fields);
            Err(de::Error::custom("listened"))
        }
        fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut listen = Listen(None);
    let _ = T::deserialize(&mut listen);
    listen.0.unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    #[test]
    fn field_names_come_from_the_structs() {
        assert_eq!(super::names::<super::RawFabric>(), ["name", "kind", "hcas"]);
        assert_eq!(super::names::<super::RawInventory>(), ["node"]);
        assert!(super::names::<super::RawNode>().contains(&"allocation"));
    }
}
