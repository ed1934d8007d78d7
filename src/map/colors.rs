//! One colour per model, the same from run to run and from plan to plan:
//! chosen by a hash of the model's name, so a model keeps its colour when
//! others come and go. Free, held and unhealthy GPUs are white, grey and
//! black (docs/map.md): no model colour is grey, white or black.

/// Sixteen hues told apart at a glance, none of them grey.
const PALETTE: [&str; 16] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf",
    "#bcbd22", "#8c6bb1", "#2f4b7c", "#d45087", "#a05195", "#ffa600",
];

/// FNV-1a: small, and the same on every machine and release.
fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A colour per model, in the order given. Models take palette colours
/// by name order, each the one its hash names or the next one free; past
/// the palette, a hue from the hash (never grey: full saturation).
pub fn assign(models: &[&str]) -> Vec<String> {
    let mut order: Vec<usize> = (0..models.len()).collect();
    order.sort_by_key(|&i| models[i]);
    let mut taken = [false; PALETTE.len()];
    let mut out = vec![String::new(); models.len()];
    for i in order {
        let h = hash(models[i]);
        let start = (h % PALETTE.len() as u64) as usize;
        out[i] = match (0..PALETTE.len()).map(|k| (start + k) % PALETTE.len()).find(|&k| !taken[k]) {
            Some(k) => {
                taken[k] = true;
                PALETTE[k].to_string()
            }
            None => format!("hsl({}, 65%, {}%)", (h >> 8) % 360, 38 + (h >> 20) % 20),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn colours_are_distinct_and_stable() {
        let a = super::assign(&["llama-3.1-8b", "llama-3.1-70b", "qwen"]);
        let b = super::assign(&["qwen", "llama-3.1-70b", "llama-3.1-8b"]);
        assert!(a[0] != a[1] && a[1] != a[2] && a[0] != a[2]);
        // The order models come in does not change their colours.
        assert_eq!((&a[0], &a[1], &a[2]), (&b[2], &b[1], &b[0]));
        let many: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
        let names: Vec<&str> = many.iter().map(String::as_str).collect();
        let c = super::assign(&names);
        assert!(c.iter().collect::<std::collections::HashSet<_>>().len() >= 30);
    }
}
