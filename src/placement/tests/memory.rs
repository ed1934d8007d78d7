//! The memory fit from a model's shape (docs/catalog.md, "Memory fit"):
//! it only ever grows with what a replica is asked to hold and shrinks
//! with the GPUs it is given, and the fast path still decides what the
//! reference path decides when models have shapes.

use std::fmt::Write as _;

use proptest::prelude::*;

use super::generate::*;
use super::{load, place_json};
use crate::placement::{Decision, Fleet, Mode, Options, need, plan};

/// A shape, as an inline arch: GQA or latent attention, perhaps sliding.
fn arch_strategy() -> impl Strategy<Value = String> {
    (
        1u32..130,
        prop::sample::select(vec![1u32, 2, 4, 8, 16, 64]),
        prop::sample::select(vec![64u32, 80, 128, 256]),
        prop::option::weighted(0.2, (prop::sample::select(vec![256u32, 512]), prop::sample::select(vec![0u32, 64]))),
        prop::option::weighted(0.3, (prop::sample::select(vec![128u32, 4096]), 0u32..130)),
        prop::sample::select(vec![2048u32, 32_768, 131_072, 1_048_576]),
    )
        .prop_map(|(layers, kv, dim, mla, sliding, max_pos)| {
            let mut s = format!("{{ layers = {layers}, max_position_embeddings = {max_pos}");
            match mla {
                Some((rank, rope)) => {
                    let _ = write!(s, ", kv_lora_rank = {rank}, qk_rope_head_dim = {rope}");
                }
                None => {
                    let _ = write!(s, ", kv_heads = {kv}, head_dim = {dim}");
                }
            }
            if let Some((window, n)) = sliding {
                let _ = write!(s, ", sliding_window = {window}, sliding_layers = {}", n.min(layers));
            }
            s + " }"
        })
}

/// One model with `arch`, one profile of `gpus` x `nodes` GPUs of
/// `memory_mb` each: whether the fleet's one node would hold its replica.
#[allow(clippy::too_many_arguments)]
fn fits(arch: &str, dtype: &str, profile: &str, engine: &str, gpus: u32, nodes: u32, memory_mb: u64) -> bool {
    let catalog = format!(
        "[[model]]\nname = \"m\"\narch = {arch}\nparams_b = 70\ndtype = \"{dtype}\"\n\
         [[model.profile]]\nname = \"p\"\nengine = \"{engine}\"\ngpu_class = \"g\"\ngpus_per_node = {gpus}\nnodes = {nodes}\n{profile}\n"
    );
    let inventory = format!(
        "[[node]]\nid = \"n\"\nstate = \"ready\"\n[[node.gpu]]\nindex = 0\nname = \"g\"\nmemory_mb = {memory_mb}\n"
    );
    let (cat, inv) = load(&catalog, &inventory);
    let fleet = Fleet::new(&inv);
    fleet.fit_check(0, &fleet.compile(&cat.models[0].profiles[0])).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A longer context, more sequences, a wider weight or cache type never
    /// make a profile fit that did not; more GPUs (per node, or nodes)
    /// never make one that fits stop fitting.
    #[test]
    fn fit_grows_with_what_is_held_and_shrinks_with_gpus(
        arch in arch_strategy(),
        len in 1u32..300_000,
        longer in 0u32..300_000,
        seqs in 1u32..8,
        more_seqs in 0u32..8,
        gpus in prop::sample::select(vec![1u32, 2, 4, 8]),
        nodes in 1u32..4,
        engine in prop::sample::select(vec!["vllm", "sglang"]),
        utilization in prop::sample::select(vec!["0.5", "0.9", "0.92", "1"]),
        overhead in prop::sample::select(vec!["0", "2", "7.5"]),
        memory_mb in prop::sample::select(vec![10_240u64, 24_576, 46_068, 81_559, 144_384]),
    ) {
        let at = |len: u32, seqs: u32, kv: &str, profile_dtype: &str| {
            format!(
                "max_model_len = {len}\nmax_num_seqs = {seqs}\nkv_cache_dtype = \"{kv}\"\n\
                 gpu_memory_utilization = {utilization}\noverhead_gb = {overhead}\n{profile_dtype}"
            )
        };
        let base = at(len, seqs, "auto", "");
        let fit = |dtype: &str, profile: &str, g: u32, n: u32| fits(&arch, dtype, profile, engine, g, n, memory_mb);
        let fits_now = fit("bf16", &base, gpus, nodes);
        // Holding more.
        if fit("bf16", &at(len + longer, seqs, "auto", ""), gpus, nodes) {
            prop_assert!(fits_now, "a longer context fit where a shorter one did not");
        }
        if fit("bf16", &at(len, seqs + more_seqs, "auto", ""), gpus, nodes) {
            prop_assert!(fits_now, "more sequences fit where fewer did not");
        }
        if fits_now {
            prop_assert!(fit("bf16", &at(len, seqs, "fp8", ""), gpus, nodes), "an fp8 cache does not fit where bf16 does");
            prop_assert!(fit("fp8", &base, gpus, nodes), "fp8 weights do not fit where bf16 do");
            prop_assert!(fit("bf16", &at(len, seqs, "auto", "dtype = \"int4\""), gpus, nodes));
            // More GPUs.
            prop_assert!(fit("bf16", &base, gpus * 2, nodes), "twice the GPUs a node stopped fitting");
            prop_assert!(fit("bf16", &base, gpus, nodes + 1), "one more node stopped fitting");
        }
        if fit("fp8", &at(len, seqs, "auto", "dtype = \"bf16\""), gpus, nodes) {
            prop_assert!(fit("bf16", &at(len, seqs, "auto", "dtype = \"fp8\""), gpus, nodes));
        }
    }

    /// With shapes, the fast path still decides what the reference path
    /// decides, and each replica's devices hold what it needs.
    #[test]
    fn fit_fast_matches_reference_with_shapes(
        nodes in prop::collection::vec(node_strategy(), 0..16),
        models in prop::collection::vec(model_strategy(), 0..4),
        arch in arch_strategy(),
        len in prop::option::of(prop::sample::select(vec![4096u32, 32_768, 131_072])),
    ) {
        let order: Vec<usize> = (0..nodes.len()).collect();
        let mut text = catalog_text(&models).replace("[[model]]\n", &format!("[[model]]\narch = {arch}\n"));
        if let Some(len) = len {
            text = text.replace("[[model.profile]]\n", &format!("[[model.profile]]\nmax_model_len = {len}\n"));
        }
        let (cat, inv) = load(&text, &inventory_text(&nodes, &order));
        let fast = place_json(&cat, &inv, Mode::Fast);
        prop_assert_eq!(&fast, &place_json(&cat, &inv, Mode::Reference));
        let fleet = Fleet::new(&inv);
        for d in plan(&cat, &inv, Options::default()).decisions {
            let Decision::Placed(p) = d else { continue };
            let prof = &cat.models[p.model as usize].profiles[p.profile as usize];
            let Some(n) = need(prof) else { continue };
            for a in &p.nodes {
                let mb = fleet.device_memory_mb(a.node, prof);
                prop_assert!(mb == 0 || n.bytes <= n.usable * mb as f64 * 1024.0 * 1024.0);
            }
        }
    }
}
