//! A model's shape, from its Hugging Face `config.json` (read from disk,
//! never fetched) or an inline `arch` table, and the profile settings of
//! the fit that uses it (docs/catalog.md, "Memory fit").

mod config;
use config::*;

use std::path::{Path, PathBuf};

use crate::decode::{Decoder, Field, Table};
use crate::diag::{Code, Diag, Source, suggest};
use crate::doc::{self, Node, Span, Value};
use crate::shape::{GIB, KV_DTYPES, Mla, OVERHEAD_GIB, Shape, Sizing, VLLM_UTILIZATION};

/// The fields of an inline `arch = { ... }`.
pub const ARCH_FIELDS: &[&str] = &[
    "layers",
    "kv_heads",
    "head_dim",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "sliding_window",
    "sliding_layers",
    "max_position_embeddings",
];

/// The share of a host's memory a CPU-only replica may use (docs/catalog.md).
const HOST_UTILIZATION: f64 = 0.9;
const MAX_DIM: u64 = 1 << 20;
const MAX_LAYERS: u64 = 100_000;
const MAX_TOKENS: u64 = (u32::MAX >> 1) as u64;

/// A model's shape, and what its config says of how the weights are kept.
#[derive(Clone, Debug)]
pub struct ModelShape {
    pub shape: Shape,
    /// Bytes a parameter, when the config names a quantisation llmgw knows.
    pub bytes_per_param: Option<f64>,
    /// The model's own type, the KV cache type of vLLM's `auto`: `bf16` or `fp16`.
    pub dtype: &'static str,
    /// The longest context the model takes, as vLLM derives it.
    pub context: Option<super::context::Context>,
}

/// `config = "..."` or `arch = { ... }`, whichever the model gives (both
/// is an error).
pub(super) fn model_shape(dec: &mut Decoder, t: &mut Table<'_, '_>) -> Field<ModelShape> {
    let config_node = t.get("config");
    let arch_node = t.get("arch");
    if let (Some(c), Some(a)) = (config_node, arch_node) {
        let d = Diag::error(Code::Shape, "a model gives both `config` and `arch`")
            .at(&dec.src, a.span, "the shape, inline")
            .label(c.span, "and from a config.json")
            .help("keep one: `config` reads the shape from the model's config.json, `arch` gives it by hand");
        dec.push(d);
        return Err(crate::decode::Invalid);
    }
    match (config_node, arch_node) {
        (Some(n), _) => from_config(dec, n).map(Some).ok_or(crate::decode::Invalid),
        (_, Some(n)) => from_arch(dec, n).map(Some).ok_or(crate::decode::Invalid),
        _ => Ok(None),
    }
}

fn from_arch(dec: &mut Decoder, n: &Node<'_>) -> Option<ModelShape> {
    let mut t = dec.table(n, "arch table")?;
    let span = t.span;
    let layers = t.required(dec, "layers", |dec, n| count(dec, n, "layers", MAX_LAYERS, false));
    let kv_heads = t.optional(dec, "kv_heads", |dec, n| count(dec, n, "kv_heads", MAX_DIM, false));
    let head_dim = t.optional(dec, "head_dim", |dec, n| count(dec, n, "head_dim", MAX_DIM, false));
    let rank = t.optional(dec, "kv_lora_rank", |dec, n| count(dec, n, "kv_lora_rank", MAX_DIM, false));
    let rope = t.optional(dec, "qk_rope_head_dim", |dec, n| count(dec, n, "qk_rope_head_dim", MAX_DIM, true));
    let window = t.optional(dec, "sliding_window", |dec, n| count(dec, n, "sliding_window", MAX_TOKENS, false));
    let sliding = t.optional(dec, "sliding_layers", |dec, n| count(dec, n, "sliding_layers", MAX_LAYERS, true));
    let max_pos = t
        .optional(dec, "max_position_embeddings", |dec, n| count(dec, n, "max_position_embeddings", MAX_TOKENS, false));
    if t.finish(dec, ARCH_FIELDS) > 0 {
        return None;
    }
    let (layers, kv_heads, head_dim) = (layers?, kv_heads.ok()?, head_dim.ok()?);
    let (rank, rope, window, sliding, max_pos) = (rank.ok()?, rope.ok()?, window.ok()?, sliding.ok()?, max_pos.ok()?);
    let mut problem = |what: String| {
        let help = "an arch gives `layers`, and `kv_heads` with `head_dim` (or, for latent attention, `kv_lora_rank` with `qk_rope_head_dim`)";
        dec.error(Code::Shape, span, what, "this arch", Some(help.into()));
    };
    let (kv_heads, head_dim, mla) = match (kv_heads, head_dim, rank, rope) {
        (_, _, Some(r), Some(q)) => (1, 0, Some(Mla { kv_lora_rank: r, qk_rope_head_dim: q })),
        (_, _, Some(_), None) | (_, _, None, Some(_)) => {
            problem("`kv_lora_rank` and `qk_rope_head_dim` go together".into());
            return None;
        }
        (Some(k), Some(d), None, None) => (k, d, None),
        _ => {
            problem("an arch needs `kv_heads` and `head_dim`".into());
            return None;
        }
    };
    let sliding = sliding.unwrap_or(0);
    if sliding > layers || (sliding > 0 && window.is_none()) {
        problem(format!("{sliding} sliding layers need a `sliding_window` and at most `layers` ({layers}) layers"));
        return None;
    }
    Some(ModelShape {
        shape: Shape {
            layers,
            kv_heads,
            head_dim,
            mla,
            sliding_window: window,
            sliding_layers: sliding,
            max_position_embeddings: max_pos,
        },
        bytes_per_param: None,
        dtype: "bf16",
        // An inline shape says nothing of RoPE scaling: the length vLLM
        // allows is its config.json's, which `config` gives.
        context: None,
    })
}

/// A profile's settings for the fit, as written; resolved with the model.
#[derive(Debug, Default, Clone)]
pub(super) struct FitFields {
    /// (type, bytes a parameter, where).
    dtype: Option<(f64, Span)>,
    kv_cache_dtype: Option<(&'static str, f64)>,
    max_model_len: Option<u32>,
    max_model_len_span: Option<Span>,
    max_num_seqs: Option<u32>,
    utilization: Option<f64>,
    overhead_gb: Option<f64>,
    /// The first setting that needs a shape, for the error when there is none.
    needs_shape: Option<(&'static str, Span)>,
}

/// The fit settings of a profile; `None` when one is unusable.
pub(super) fn fit_fields(dec: &mut Decoder, t: &mut Table<'_, '_>) -> Option<FitFields> {
    let mut f = FitFields::default();
    let note = |name: &'static str, span: Span, f: &mut FitFields| {
        if f.needs_shape.is_none_or(|(_, s)| span.start < s.start) {
            f.needs_shape = Some((name, span));
        }
    };
    let dtype = t.optional(dec, "dtype", |dec, n| Some((super::dtype_bytes(dec, n)?, n.span)));
    let kv = t.optional(dec, "kv_cache_dtype", |dec, n| {
        let d = dec.string(n, "kv_cache_dtype")?;
        let found = KV_DTYPES.iter().find(|(k, _)| *k == d).copied();
        if found.is_none() {
            let help = suggest(&d, KV_DTYPES.iter().map(|(k, _)| *k), "the KV cache types are");
            dec.error(
                Code::UnknownDtype,
                n.span,
                format!("unknown kv_cache_dtype `{d}`"),
                "not a cache type",
                Some(help),
            );
        }
        found.map(|k| (k, n.span))
    });
    let len =
        t.optional(dec, "max_model_len", |dec, n| Some((count(dec, n, "max_model_len", MAX_TOKENS, false)?, n.span)));
    let seqs = t.optional(dec, "max_num_seqs", |dec, n| Some((count(dec, n, "max_num_seqs", MAX_DIM, false)?, n.span)));
    let util = t.optional(dec, "gpu_memory_utilization", |dec, n| {
        let u = dec.number_above(
            n,
            "gpu_memory_utilization",
            false,
            "a share of the GPU's memory, above 0 and at most 1: 0.92",
        )?;
        if u > 1.0 {
            let msg = format!("`gpu_memory_utilization` must be at most 1, found {u}");
            dec.error(Code::OutOfRange, n.span, msg, "more than the whole GPU", None);
            return None;
        }
        Some((u, n.span))
    });
    let overhead = t.optional(dec, "overhead_gb", |dec, n| {
        let o = dec.number_above(n, "overhead_gb", true, "GiB per GPU beyond weights and KV cache: 2")?;
        if o > MAX_DIM as f64 {
            dec.error(Code::OutOfRange, n.span, format!("`overhead_gb` must be at most {MAX_DIM}"), "too large", None);
            return None;
        }
        Some((o, n.span))
    });
    f.dtype = dtype.ok()?;
    if let Some(((name, bytes), span)) = kv.ok()? {
        f.kv_cache_dtype = Some((name, bytes));
        note("kv_cache_dtype", span, &mut f);
    }
    if let Some((v, span)) = len.ok()? {
        f.max_model_len = Some(v);
        f.max_model_len_span = Some(span);
        note("max_model_len", span, &mut f);
    }
    if let Some((v, span)) = seqs.ok()? {
        f.max_num_seqs = Some(v);
        note("max_num_seqs", span, &mut f);
    }
    if let Some((v, span)) = util.ok()? {
        f.utilization = Some(v);
        note("gpu_memory_utilization", span, &mut f);
    }
    if let Some((v, span)) = overhead.ok()? {
        f.overhead_gb = Some(v);
        note("overhead_gb", span, &mut f);
    }
    Some(f)
}

/// The model's size as a profile runs it, and the settings of the fit
/// from the model's shape (docs/catalog.md, "Memory fit").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Memory {
    /// Weight bytes: the model's, or its `params_b` at the profile's `dtype`
    /// (its `weights_gb` in proportion, without `params_b`).
    pub weight_bytes: Option<f64>,
    /// `Some` when the model has a shape.
    pub sizing: Option<Sizing>,
}

/// What a model says of its size, for the profiles to resolve against.
pub(super) struct ModelSize {
    pub params_b: Option<f64>,
    pub weights_gb: Option<f64>,
    pub bytes_per_param: f64,
    pub weight_bytes: Option<f64>,
}

/// A profile's memory from the model's size and shape; `None` (and an
/// error) when its settings cannot be used.
pub(super) fn resolve(
    dec: &mut Decoder,
    f: &FitFields,
    size: &ModelSize,
    shape: Option<&ModelShape>,
    who: (&str, &str, Span),
    cpu_only: bool,
) -> Option<Memory> {
    let (model, profile, name_span) = who;
    let weight_bytes = match (f.dtype, size.params_b, size.weights_gb) {
        (None, _, _) => size.weight_bytes,
        (Some((b, _)), Some(p), _) => Some(p * 1e9 * b),
        (Some((b, _)), None, Some(gb)) => Some(gb * 1e9 * b / size.bytes_per_param),
        (Some(_), None, None) => None,
    };
    let Some(ms) = shape else {
        if let Some((field, span)) = f.needs_shape {
            let d = Diag::error(Code::FitNoShape, format!("`{field}` needs the model's shape (profile `{profile}` of `{model}`)"))
                .at(&dec.src, span, "nothing to size it against")
                .help("give the model `config = \"path/to/config.json\"` or `arch = { layers = ..., kv_heads = ..., head_dim = ... }` (docs/catalog.md, \"Memory fit\")");
            dec.push(d);
            return None;
        }
        return Some(Memory { weight_bytes, sizing: None });
    };
    let Some(max_model_len) = f.max_model_len.or(ms.shape.max_position_embeddings) else {
        let d = Diag::error(
            Code::MissingField,
            format!("profile `{profile}` of `{model}` has no `max_model_len`, and the model's shape gives no max_position_embeddings"),
        )
        .at(&dec.src, name_span, "how long may a sequence be?")
        .help("set `max_model_len` on the profile, or `max_position_embeddings` in the model's arch");
        dec.push(d);
        return None;
    };
    // Past the model's own context the engine refuses to start.
    if let (Some(len), Some(span), Some(c)) = (f.max_model_len, f.max_model_len_span, &ms.context)
        && u64::from(len) > c.tokens
    {
        let d = Diag::error(
            Code::MaxModelLen,
            format!(
                "profile `{profile}` of `{model}` asks max_model_len = {len}, more than the model's own {} ({})",
                c.tokens, c.why
            ),
        )
        .at(&dec.src, span, "longer than the model takes")
        .help(format!("vLLM refuses to start past the length it derives from config.json; use at most {}", c.tokens));
        dec.push(d);
        return None;
    }
    let (kv_name, kv_bytes) = f.kv_cache_dtype.unwrap_or(("auto", 2.0));
    Some(Memory {
        weight_bytes,
        sizing: Some(Sizing {
            shape: ms.shape.clone(),
            kv_bytes,
            kv_cache_dtype: (kv_name != "auto" && kv_name != ms.dtype).then_some(kv_name),
            max_model_len,
            max_num_seqs: f.max_num_seqs.unwrap_or(1),
            max_num_seqs_set: f.max_num_seqs.is_some(),
            utilization: f.utilization.unwrap_or(if cpu_only { HOST_UTILIZATION } else { VLLM_UTILIZATION }),
            overhead: f.overhead_gb.unwrap_or(OVERHEAD_GIB) * GIB,
        }),
    })
}
