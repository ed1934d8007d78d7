//! The rejections of one attempt, eight bytes each. Explaining a model of
//! 1,500 replicas on 10,000 nodes records millions of them, nearly all
//! alike ("has 0 free h100-80gb-hbm3 GPUs, needs 1", "already hosts this
//! model"): each distinct (profile, pool, reason) is kept once, and each
//! rejection is a node and an index into those. As `Rejection`s they took
//! six times the room, and explaining took twenty times the memory of
//! placing.

use std::collections::HashMap;

use super::{Pool, Reason, Rejection};

/// Stands for "no node" (a pool's own verdict); no fleet has that many.
const NO_NODE: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct Rejections {
    kinds: Vec<(u32, Pool, Reason)>,
    /// (node or NO_NODE, index into `kinds`), in the order recorded.
    list: Vec<(u32, u32)>,
    /// While recording: where each kind is in `kinds`.
    index: HashMap<(u32, Pool, Reason), u32>,
}

impl PartialEq for Rejections {
    fn eq(&self, o: &Rejections) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter())
    }
}

impl Eq for Rejections {}

impl Rejections {
    pub fn push(&mut self, r: Rejection) {
        let key = (r.profile, r.pool, r.reason);
        // Runs of nodes rejected alike are the common case.
        let kind = match self.list.last() {
            Some(&(_, k)) if self.kinds[k as usize] == key => k,
            _ => *self.index.entry(key).or_insert_with(|| {
                self.kinds.push(key);
                (self.kinds.len() - 1) as u32
            }),
        };
        self.list.push((r.node.unwrap_or(NO_NODE), kind));
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn reserve(&mut self, n: usize) {
        self.list.reserve(n);
    }

    /// Done recording: the room reserved and the index go.
    pub fn shrink_to_fit(&mut self) {
        self.list.shrink_to_fit();
        self.index = HashMap::new();
    }

    pub fn iter(&self) -> impl Iterator<Item = Rejection> + '_ {
        self.list.iter().map(|&(node, k)| {
            let (profile, pool, reason) = self.kinds[k as usize];
            Rejection { profile, pool, node: (node != NO_NODE).then_some(node), reason }
        })
    }

    pub fn to_vec(&self) -> Vec<Rejection> {
        self.iter().collect()
    }

    /// Each distinct (profile, pool, reason), in the order first recorded.
    pub fn kinds(&self) -> &[(u32, Pool, Reason)] {
        &self.kinds
    }

    /// Each rejection as its node and the index of its kind in `kinds`.
    pub fn entries(&self) -> impl Iterator<Item = (Option<u32>, usize)> + '_ {
        self.list.iter().map(|&(node, k)| ((node != NO_NODE).then_some(node), k as usize))
    }
}

impl FromIterator<Rejection> for Rejections {
    fn from_iter<I: IntoIterator<Item = Rejection>>(iter: I) -> Rejections {
        let mut out = Rejections::default();
        for r in iter {
            out.push(r);
        }
        out.shrink_to_fit();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::StateCode;

    #[test]
    fn what_goes_in_comes_out_in_order() {
        let r = |node: Option<u32>, reason| Rejection { profile: 1, pool: Pool::Single, node, reason };
        let all = vec![
            r(Some(0), Reason::Gpus { free: 0 }),
            r(Some(1), Reason::Gpus { free: 0 }),
            r(Some(2), Reason::State(StateCode::Down)),
            r(Some(3), Reason::Gpus { free: 0 }),
            r(None, Reason::PoolTooSmall { qualify: 0 }),
            r(Some(4), Reason::Gpus { free: 2 }),
        ];
        let c: Rejections = all.iter().cloned().collect();
        assert_eq!(c.to_vec(), all);
        assert_eq!((c.len(), c.kinds.len()), (6, 4));
        let mut again = Rejections::default();
        all.iter().cloned().for_each(|x| again.push(x));
        assert_eq!(again, c);
        assert_ne!(c, all[..5].iter().cloned().collect());
    }
}
