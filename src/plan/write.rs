//! The plan document written: what `place --format json` prints
//! (docs/placement.md, "Output"), streamed, with each unplaced replica's
//! reasons in the form asked for. `plan::read` reads it back.

use serde::Serialize;
use serde::ser::{SerializeSeq, SerializeStruct, Serializer};

use std::rc::Rc;
use std::sync::Arc;

use super::reasons::{Closest, ReasonGroup, SoFar, closest, grouped};
use crate::placement::{Decision, Placement, Plan, Pool, Rejection, Why};
use crate::share::ShareJson;
use crate::wording::Names;

/// A JSON array written straight from an iterator, so a plan with ten
/// thousand placements is never built up as one big value first.
pub struct SeqOf<I>(pub std::cell::RefCell<Option<I>>);

impl<I> SeqOf<I> {
    pub fn new(iter: I) -> Self {
        SeqOf(std::cell::RefCell::new(Some(iter)))
    }
}

impl<I, T> Serialize for SeqOf<I>
where
    I: Iterator<Item = T>,
    T: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let iter = self.0.borrow_mut().take();
        let mut seq = s.serialize_seq(None)?;
        for item in iter.into_iter().flatten() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

#[derive(serde::Serialize)]
pub struct PlacementJson<'a> {
    pub model: &'a str,
    pub replica: u32,
    pub profile: &'a str,
    pub engine: &'a str,
    pub pool: String,
    pub fabric: Option<&'a str>,
    pub nodes: Vec<ShareJson<'a>>,
}

#[derive(serde::Serialize)]
pub struct RejectionJson<'a> {
    pub profile: &'a str,
    pub pool: String,
    pub node: &'a str,
    pub reason: String,
}

impl<'a> Names<'a> {
    pub fn placement_json(&self, p: &'a Placement) -> PlacementJson<'a> {
        let prof = self.profile(p.model, p.profile);
        PlacementJson {
            model: &self.model(p.model).name,
            replica: p.replica,
            profile: &prof.name,
            engine: prof.engine.name,
            pool: self.pool(p.fabric.map_or(Pool::Single, Pool::Fabric), prof),
            fabric: p.fabric.map(|f| self.fabric(f)),
            nodes: p
                .nodes
                .iter()
                .enumerate()
                .map(|(rank, a)| ShareJson {
                    rank: Some(rank as u32),
                    hcas: Some(self.hcas(p, a.node)),
                    ..ShareJson::of(self.node(a.node), &a.gpus, &a.mig_devices, a.cpus_millis, a.memory_mb)
                })
                .collect(),
        }
    }

    pub fn rejection_json(&self, model: u32, r: &Rejection) -> RejectionJson<'a> {
        let prof = self.profile(model, r.profile);
        RejectionJson {
            profile: &prof.name,
            pool: self.pool(r.pool, prof),
            node: r.node.map_or("", |n| self.node(n)),
            reason: self.reason(r.reason, prof),
        }
    }
}

/// How much of why a replica was left unplaced `place --format json` tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Rejections {
    /// `reasons`: one entry per distinct reason of a pool, with its nodes.
    #[default]
    Grouped,
    /// `rejections`: every rejection, node by node, in the order tried.
    Full,
    /// Neither; `closest` only.
    None,
}

pub fn json<W: std::io::Write>(
    out: W,
    names: &Names<'_>,
    plan: &Plan,
    form: Rejections,
    inputs: Option<&crate::plan::Inputs>,
) -> std::io::Result<()> {
    crate::json::write_json(out, &PlaceDoc { names, plan, form, inputs })
}

struct PlaceDoc<'a> {
    names: &'a Names<'a>,
    plan: &'a Plan,
    form: Rejections,
    inputs: Option<&'a crate::plan::Inputs>,
}

/// A replica that already runs, where it really is.
#[derive(Serialize)]
struct ExistingJson<'a> {
    model: &'a str,
    replica: u32,
    profile: Option<&'a str>,
    nodes: Vec<ShareJson<'a>>,
    /// Submitted and waiting for its resources (a pending Slurm job): it
    /// exists, holds nothing yet, and render leaves its file as it is.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pending: bool,
}

/// The replicas that already run: allocations naming a catalog model and
/// an index below its `replicas`, models in catalog order, replicas by
/// index, nodes by id. A plan is the whole desired state: render writes
/// these beside the new placements.
fn existing<'a>(names: &Names<'a>) -> Vec<ExistingJson<'a>> {
    use std::collections::{BTreeMap, HashMap};
    let models: HashMap<&str, usize> =
        names.catalog.models.iter().enumerate().map(|(i, m)| (m.name.as_str(), i)).collect();
    let mut found: BTreeMap<(usize, u32), ExistingJson<'a>> = BTreeMap::new();
    for node in &names.fleet.inv.nodes {
        for a in &node.allocations {
            let Some(&mi) = models.get(a.model.as_str()) else { continue };
            let m = &names.catalog.models[mi];
            if a.replica >= m.replicas {
                continue;
            }
            let e = found.entry((mi, a.replica)).or_insert_with(|| ExistingJson {
                model: &m.name,
                replica: a.replica,
                profile: None,
                nodes: Vec::new(),
                pending: true,
            });
            e.profile = e.profile.or(a.profile.as_deref());
            e.pending &= a.pending;
            let cpus = a.cpus.map(crate::units::millis);
            e.nodes.push(ShareJson::of(&node.id, &a.gpus, &a.mig_devices, cpus, a.memory_mb));
        }
    }
    found.into_values().collect()
}

/// A value computed once and written wherever it is shared.
struct Shared<T>(Rc<T>);

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

struct UnplacedJson<'a> {
    model: &'a str,
    replica: u32,
    /// The last replica of a run said once (grouped and none forms only).
    through: Option<u32>,
    full: Option<Vec<RejectionJson<'a>>>,
    grouped: Option<Shared<Vec<ReasonGroup<'a>>>>,
    closest: Shared<Vec<Closest<'a>>>,
}

impl Serialize for UnplacedJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("model", self.model)?;
        m.serialize_entry("replica", &self.replica)?;
        if let Some(through) = &self.through {
            m.serialize_entry("through", through)?;
        }
        if let Some(full) = &self.full {
            m.serialize_entry("rejections", full)?;
        }
        if let Some(grouped) = &self.grouped {
            m.serialize_entry("reasons", grouped)?;
        }
        m.serialize_entry("closest", &self.closest)?;
        m.end()
    }
}

/// Grouped reasons and closest misses, as computed for one `Why`.
type Computed<'a> = (*const Why, Rc<Vec<ReasonGroup<'a>>>, Rc<Vec<Closest<'a>>>);

/// The unplaced replicas in order, each with what the plan had placed
/// before it. Replicas left out for one shared reason (the same `Why`)
/// with nothing placed in between share their grouped reasons and closest
/// misses, computed once. In the grouped and none forms, a run of them
/// (one model, consecutive indices, the same reasons and closest misses)
/// is one entry, `replica` to `through`: a million replicas left out for
/// one reason cost one entry, not a million.
struct Unplaced<'a> {
    names: &'a Names<'a>,
    decisions: std::iter::Peekable<std::slice::Iter<'a, Decision>>,
    form: Rejections,
    so_far: SoFar<'a>,
    last: Option<Computed<'a>>,
}

impl<'a> Unplaced<'a> {
    /// The grouped reasons (empty unless that form is asked for) and the
    /// closest misses of `why`, reusing the last ones computed for it.
    fn computed(&mut self, model: u32, why: &Arc<Why>) -> (Rc<Vec<ReasonGroup<'a>>>, Rc<Vec<Closest<'a>>>) {
        let key = Arc::as_ptr(why);
        if let Some((k, g, c)) = &self.last
            && *k == key
        {
            return (g.clone(), c.clone());
        }
        let g = if self.form == Rejections::Grouped {
            Rc::new(grouped(self.names, model, &why.rejections))
        } else {
            Rc::new(Vec::new())
        };
        let c = Rc::new(closest(self.names, model, why, &self.so_far));
        self.last = Some((key, g.clone(), c.clone()));
        (g, c)
    }

    /// The last replica of the run that starts at `replica`: the unplaced
    /// decisions that follow it directly, for the next indices of the same
    /// model, saying the same.
    fn run_end(&mut self, model: u32, replica: u32, said: &(Rc<Vec<ReasonGroup<'a>>>, Rc<Vec<Closest<'a>>>)) -> u32 {
        let mut end = replica;
        while let Some(Decision::Unplaced { model: m, replica: r, why }) = self.decisions.peek().copied() {
            if *m != model || Some(*r) != end.checked_add(1) {
                break;
            }
            let next = self.computed(model, why);
            if !(Rc::ptr_eq(&next.0, &said.0) && Rc::ptr_eq(&next.1, &said.1)) && next != *said {
                break;
            }
            end = *r;
            self.decisions.next();
        }
        end
    }
}

impl<'a> Iterator for Unplaced<'a> {
    type Item = UnplacedJson<'a>;

    fn next(&mut self) -> Option<UnplacedJson<'a>> {
        loop {
            match self.decisions.next()? {
                Decision::Placed(p) => {
                    self.so_far.add(self.names, p);
                    self.last = None;
                }
                Decision::Unplaced { model, replica, why } => {
                    let said = self.computed(*model, why);
                    let names = self.names;
                    let through = match self.form {
                        Rejections::Full => None,
                        Rejections::Grouped | Rejections::None => {
                            Some(self.run_end(*model, *replica, &said)).filter(|end| end != replica)
                        }
                    };
                    let (grouped, closest) = said;
                    return Some(UnplacedJson {
                        model: &names.model(*model).name,
                        replica: *replica,
                        through,
                        full: (self.form == Rejections::Full)
                            .then(|| why.rejections.iter().map(|r| names.rejection_json(*model, r)).collect()),
                        grouped: (self.form == Rejections::Grouped).then_some(Shared(grouped)),
                        closest: Shared(closest),
                    });
                }
            }
        }
    }
}

#[derive(Serialize)]
struct SummaryJson<'a> {
    wanted: u64,
    existing: u64,
    placed: u64,
    unplaced: u64,
    bound: u64,
    stranded: &'a std::collections::BTreeMap<String, u64>,
}

impl Serialize for PlaceDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let names = self.names;
        let placements = self.plan.decisions.iter().filter_map(|d| match d {
            Decision::Placed(p) => Some(names.placement_json(p)),
            Decision::Unplaced { .. } => None,
        });
        let unplaced = Unplaced {
            names,
            decisions: self.plan.decisions.iter().peekable(),
            form: self.form,
            so_far: SoFar::default(),
            last: None,
        };
        let sum = &self.plan.summary;
        let mut st = s.serialize_struct("Plan", 5)?;
        st.serialize_field("placements", &SeqOf::new(placements))?;
        st.serialize_field("existing", &existing(names))?;
        st.serialize_field("unplaced", &SeqOf::new(unplaced))?;
        st.serialize_field(
            "summary",
            &SummaryJson {
                wanted: sum.wanted,
                existing: sum.existing,
                placed: sum.placed,
                unplaced: sum.unplaced,
                bound: sum.bound,
                stranded: &sum.stranded,
            },
        )?;
        if let Some(inputs) = self.inputs {
            st.serialize_field("inputs", inputs)?;
        }
        st.end()
    }
}
