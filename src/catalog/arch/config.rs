//! Reading a model's Hugging Face config.json (and its quantization) into
//! the shape the memory model needs.

use super::*;

/// Where `config` points: relative paths from the catalog's folder (from
/// the working directory for a catalog on standard input). Never `-`,
/// which would read standard input.
pub(super) fn config_path(catalog: &str, rel: &str) -> PathBuf {
    let rel = Path::new(rel);
    let base = if catalog == "<stdin>" { Path::new("") } else { Path::new(catalog).parent().unwrap_or(Path::new("")) };
    let path = base.join(rel);
    if path.as_os_str() == "-" { Path::new(".").join(path) } else { path }
}

pub(super) fn from_config(dec: &mut Decoder, n: &Node<'_>) -> Option<ModelShape> {
    let rel = dec.string(n, "config")?;
    if rel.is_empty() {
        dec.error(Code::WrongType, n.span, "`config` is empty".into(), "no path", None);
        return None;
    }
    let path = config_path(dec.src.name(), &rel);
    let src = match crate::input::read_regular(&path) {
        Ok(src) => src,
        // A file that is read but is not text points into itself.
        Err(d) if d.src.is_some() => {
            dec.push(d);
            return None;
        }
        Err(d) => {
            let help = "`config` is a Hugging Face config.json, relative to the catalog's folder; llmgw reads it, never fetches it";
            dec.error(d.code, n.span, d.message, "this config", Some(help.into()));
            return None;
        }
    };
    let root = match doc::parse(src.text(), doc::Format::Json) {
        Ok(root) => root,
        Err(e) => {
            // Shown only as far as it was read as JSON: a `config` naming
            // /etc/passwd must not print its first line.
            let end = e.span.start.min(src.text().len());
            let end = (0..=end).rev().find(|&i| src.text().is_char_boundary(i)).unwrap_or(0);
            let parsed = crate::diag::source(src.name(), src.text()[..end].to_string());
            let d = Diag::error(Code::Syntax, format!("{} is not a valid config.json (at byte {end})", src.name()))
                .at(&parsed, Span::new(end, end), "not JSON from here")
                .help(format!("the `config` of a model in {} must be JSON, as Hugging Face ships it", dec.src.name()));
            dec.push(d);
            return None;
        }
    };
    let mut cdec = Decoder::new(src.clone());
    let shape = read_config(&mut cdec, &src, &root);
    for d in cdec.diags {
        dec.push(d);
    }
    shape
}

/// A key of a JSON object; `null` is as good as absent.
pub(super) fn key<'v, 'a>(node: &'v Node<'a>, k: &str) -> Option<&'v Node<'a>> {
    let Value::Table(entries) = &node.value else { return None };
    entries.iter().find(|e| e.key == k).map(|e| &e.value).filter(|v| !matches!(v.value, Value::Null))
}

/// A whole number from 1 to `max` (0 too, with `zero`).
pub(super) fn count(dec: &mut Decoder, n: &Node<'_>, field: &str, max: u64, zero: bool) -> Option<u32> {
    let v = dec.uint(n, field, max)?;
    if v == 0 && !zero {
        dec.error(Code::OutOfRange, n.span, format!("`{field}` must be at least 1"), "0", None);
        return None;
    }
    Some(v as u32)
}

pub(super) fn read_config(dec: &mut Decoder, src: &Source, root: &Node<'_>) -> Option<ModelShape> {
    let at_root = Span::new(0, src.text().len().min(1));
    if !matches!(root.value, Value::Table(_)) {
        let d = Diag::error(Code::WrongType, format!("{} is not a JSON object", src.name()))
            .at(src, root.span, "expected { ... }")
            .help("a Hugging Face config.json is one object of the model's settings");
        dec.push(d);
        return None;
    }
    // Multimodal configs keep the language model's settings in `text_config`.
    let cfg = match key(root, "text_config") {
        Some(t) if key(root, "num_hidden_layers").is_none() && matches!(t.value, Value::Table(_)) => t,
        _ => root,
    };
    let missing = |dec: &mut Decoder, what: &str| {
        let d = Diag::error(Code::MissingField, format!("{} has no `{what}`", src.name()))
            .at(src, at_root, "this config.json")
            .help("llmgw sizes the KV cache from num_hidden_layers, num_key_value_heads (or num_attention_heads) and head_dim (or hidden_size / num_attention_heads); give the model `arch = { ... }` instead if the config lacks them");
        dec.push(d);
    };
    let Some(layers_node) = key(cfg, "num_hidden_layers") else {
        missing(dec, "num_hidden_layers");
        return None;
    };
    let layers = count(dec, layers_node, "num_hidden_layers", MAX_LAYERS, false);
    let mla = match key(cfg, "kv_lora_rank") {
        Some(r) => {
            let rank = count(dec, r, "kv_lora_rank", MAX_DIM, false);
            let rope = match key(cfg, "qk_rope_head_dim") {
                Some(q) => count(dec, q, "qk_rope_head_dim", MAX_DIM, true),
                None => Some(0),
            };
            Some(Mla { kv_lora_rank: rank?, qk_rope_head_dim: rope? })
        }
        None => None,
    };
    let heads = key(cfg, "num_attention_heads").map(|n| count(dec, n, "num_attention_heads", MAX_DIM, false));
    let (kv_heads, head_dim) = if mla.is_some() {
        (1, 0)
    } else {
        let kv = match (key(cfg, "num_key_value_heads"), heads) {
            (Some(n), _) => count(dec, n, "num_key_value_heads", MAX_DIM, false),
            (None, Some(h)) => h,
            (None, None) => {
                missing(dec, "num_key_value_heads");
                None
            }
        };
        let dim = match (key(cfg, "head_dim"), key(cfg, "hidden_size"), heads) {
            (Some(n), _, _) => count(dec, n, "head_dim", MAX_DIM, false),
            (None, Some(h), Some(Some(heads))) => {
                count(dec, h, "hidden_size", MAX_DIM, false).map(|h| (h / heads).max(1))
            }
            (None, _, Some(None)) => None,
            _ => {
                missing(dec, "head_dim");
                None
            }
        };
        (kv?, dim?)
    };
    let window = key(cfg, "sliding_window").map(|n| count(dec, n, "sliding_window", MAX_TOKENS, false));
    let sliding_layers = match key(cfg, "layer_types") {
        Some(n) => dec.string_list(n, "layer_types")?.iter().filter(|t| *t == "sliding_attention").count() as u32,
        None => 0,
    };
    let max_pos =
        key(cfg, "max_position_embeddings").map(|n| count(dec, n, "max_position_embeddings", MAX_TOKENS, false));
    let dtype = key(cfg, "torch_dtype").or_else(|| key(cfg, "dtype")).and_then(|n| match &n.value {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    });
    let quant = key(cfg, "quantization_config").or_else(|| key(root, "quantization_config"));
    let layers = layers?;
    let window = window.map(|w| w.ok_or(())).transpose().ok()?;
    let max_pos = max_pos.map(|w| w.ok_or(())).transpose().ok()?;
    Some(ModelShape {
        shape: Shape {
            layers,
            kv_heads,
            head_dim,
            mla,
            sliding_window: window,
            sliding_layers: if window.is_some() { sliding_layers.min(layers) } else { 0 },
            max_position_embeddings: max_pos,
        },
        bytes_per_param: quant.and_then(quant_bytes),
        context: super::super::context::derived(cfg),
        // vLLM's `auto` runs FP32 checkpoints in FP16, BF16 ones in BF16.
        dtype: match dtype.as_deref() {
            Some("float16" | "float32" | "half" | "float") => "fp16",
            _ => "bf16",
        },
    })
}

/// Bytes a parameter of a quantised checkpoint: FP8 one; MXFP4 half, and
/// one 8-bit scale for each 32 values; AWQ and GPTQ their `bits`.
pub(super) fn quant_bytes(q: &Node<'_>) -> Option<f64> {
    let method = match &key(q, "quant_method")?.value {
        Value::Str(s) => s.to_ascii_lowercase(),
        _ => return None,
    };
    match method.as_str() {
        "fp8" | "fbgemm_fp8" => Some(1.0),
        "mxfp4" => Some(0.5 + 1.0 / 32.0),
        "awq" | "gptq" => {
            let bits = match key(q, "bits").map(|b| &b.value) {
                Some(Value::Int(b)) if (1..=16).contains(b) => *b as f64,
                _ => 4.0,
            };
            Some(bits / 8.0)
        }
        _ => None,
    }
}
