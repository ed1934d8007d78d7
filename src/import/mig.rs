//! MIG profiles as schedulers name them (`1g.10gb`, `3g.40gb`, Slurm's
//! autodetected `nvidia_a100_3g.39gb`), and how many of them one GPU holds.

/// The compute slices of a profile: `3g.40gb` -> 3; `None` when the text
/// is not a MIG profile (`<N>g.<M>gb`, optionally `+me` or another suffix
/// after the memory).
pub fn slices(profile: &str) -> Option<u64> {
    let (g, rest) = profile.split_once("g.")?;
    let gb = rest.split('+').next()?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
    let mem = gb.strip_suffix("gb")?;
    // `1g.10gb`; `3g.39gb`; `1g.5gb`; never `gpu.10gb` or `1g.gb`.
    (digits(g) && digits(mem)).then(|| g.parse().ok()).flatten().filter(|&n| (1..=8).contains(&n))
}

pub fn is_profile(s: &str) -> bool {
    slices(s).is_some()
}

/// MIG devices of one profile a GPU holds (docs/kubernetes.md, MIG): 1g 7, 2g 3, 3g 2, 4g
/// and 7g 1.
pub fn per_gpu(profile: &str) -> u64 {
    match slices(profile) {
        Some(1) => 7,
        Some(2) => 3,
        Some(3) => 2,
        _ => 1,
    }
}

/// A Slurm gres type that names MIG devices: the product it belongs to
/// when the type says (`nvidia_a100_3g.39gb` -> `nvidia_a100`), and the
/// profile; `None` for a type that is a whole GPU.
pub fn slurm_type(ty: &str) -> Option<(Option<&str>, &str)> {
    if is_profile(ty) {
        return Some((None, ty));
    }
    let (product, profile) = ty.rsplit_once('_')?;
    is_profile(profile).then_some((Some(product).filter(|p| !p.is_empty()), profile))
}

/// MIG devices packed onto as few GPUs as hold them: each GPU has seven
/// compute slices and at most seven devices; the largest devices go first,
/// each onto the first GPU with room. Returns, per GPU, the indices into
/// `profiles` of the devices it holds, in the order given.
///
/// The caller bounds `profiles` (at most 7 x 1024 devices), so this is
/// quadratic in a bounded number.
pub fn pack(profiles: &[&str]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..profiles.len()).collect();
    let size = |i: usize| slices(profiles[i]).unwrap_or(7).min(7);
    order.sort_by_key(|&i| std::cmp::Reverse(size(i)));
    let mut gpus: Vec<(u64, Vec<usize>)> = Vec::new();
    for i in order {
        let s = size(i);
        match gpus.iter_mut().find(|(used, held)| used + s <= 7 && (held.len() as u64) < super::MAX_MIG_PER_GPU) {
            Some((used, held)) => {
                *used += s;
                held.push(i);
            }
            None => gpus.push((s, vec![i])),
        }
    }
    gpus.into_iter()
        .map(|(_, mut held)| {
            held.sort_unstable();
            held
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_told_from_other_types() {
        assert_eq!(slices("1g.10gb"), Some(1));
        assert_eq!(slices("3g.40gb"), Some(3));
        assert_eq!(slices("1g.10gb+me"), Some(1));
        for not in ["h100", "gpu", "1g.gb", "g.10gb", "a100-80gb", "nvidia_h100_80gb_hbm3", "1g10gb", "99999g.1gb"] {
            assert_eq!(slices(not), None, "{not}");
        }
    }

    #[test]
    fn slurm_types_name_the_product() {
        assert_eq!(slurm_type("1g.10gb"), Some((None, "1g.10gb")));
        assert_eq!(slurm_type("nvidia_a100_3g.39gb"), Some((Some("nvidia_a100"), "3g.39gb")));
        assert_eq!(slurm_type("nvidia_h100_80gb_hbm3_1g.10gb"), Some((Some("nvidia_h100_80gb_hbm3"), "1g.10gb")));
        assert_eq!(slurm_type("nvidia_h100_80gb_hbm3"), None);
        assert_eq!(slurm_type("h100"), None);
    }

    #[test]
    fn devices_pack_onto_as_few_gpus_as_hold_them() {
        assert_eq!(pack(&["1g.10gb"; 21]).len(), 3);
        assert_eq!(pack(&["1g.10gb"; 22]).len(), 4);
        // Two 4g and six 1g: a 4g and three 1g on each of two GPUs.
        let mixed = ["4g.40gb", "4g.40gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"];
        let p = pack(&mixed);
        assert_eq!(p.len(), 2);
        assert!(p.iter().all(|g| g.len() == 4));
        assert_eq!(pack(&["3g.40gb"; 3]).len(), 2);
        assert_eq!(per_gpu("2g.20gb"), 3);
        assert_eq!(per_gpu("7g.80gb"), 1);
    }
}
