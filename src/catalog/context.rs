//! The longest context a model takes, as vLLM derives it from the model's
//! config.json before it starts (`_get_and_verify_max_len` in vLLM's
//! `vllm/config/model.py`): the smallest of the length keys the config
//! has, scaled by its RoPE scaling factor unless the scaling is one that
//! already counts it (`su`, `longrope`, `llama3`; Gemma 3's length is
//! scaled already); YaRN scales its `original_max_position_embeddings`.
//! A `max_model_len` past it makes vLLM refuse to start (unless
//! `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is set), so lint refuses it first.

use crate::doc::{Node, Value};

/// The keys vLLM reads a model's length from, in its order.
const LENGTH_KEYS: &[&str] = &[
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
];

/// The model's longest context, and how it was found (for messages).
#[derive(Clone, Debug, PartialEq)]
pub struct Context {
    pub tokens: u64,
    pub why: String,
}

fn key<'v, 'a>(node: &'v Node<'a>, k: &str) -> Option<&'v Node<'a>> {
    let Value::Table(entries) = &node.value else { return None };
    entries.iter().find(|e| e.key == k).map(|e| &e.value).filter(|v| !matches!(v.value, Value::Null))
}

fn number(n: &Node<'_>) -> Option<f64> {
    match n.value {
        Value::Int(i) => Some(i as f64),
        Value::Float(f) if f.is_finite() => Some(f),
        _ => None,
    }
}

fn text<'v>(n: &'v Node<'_>) -> Option<&'v str> {
    match &n.value {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// The context `cfg` (a config.json's language model settings) allows;
/// `None` when it names no length.
pub fn derived(cfg: &Node<'_>) -> Option<Context> {
    let (mut tokens, found) = LENGTH_KEYS
        .iter()
        .filter_map(|k| Some((number(key(cfg, k)?)?, *k)))
        .filter(|(v, _)| *v > 0.0)
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    let mut why = format!("{found} = {tokens}");
    let gemma3 = key(cfg, "model_type").and_then(text).is_some_and(|t| t.contains("gemma3"));
    let scaling = key(cfg, "rope_scaling").or_else(|| key(cfg, "rope_parameters"));
    if let Some(rope) = scaling.filter(|_| !gemma3) {
        let kind = key(rope, "rope_type").or_else(|| key(rope, "type")).and_then(text).unwrap_or("default");
        if !matches!(kind, "su" | "longrope" | "llama3") {
            let factor = key(rope, "factor").and_then(number).unwrap_or(1.0);
            if kind == "yarn"
                && let Some(original) = key(rope, "original_max_position_embeddings").and_then(number)
            {
                tokens = original;
                why = format!("original_max_position_embeddings = {original}");
            }
            if factor != 1.0 {
                tokens *= factor;
                why = format!("{why} x {kind} rope scaling factor {factor}");
            }
        }
    }
    // vLLM takes the integer part.
    Some(Context { tokens: tokens.clamp(0.0, u64::MAX as f64) as u64, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(json: &str) -> Option<Context> {
        let root = crate::doc::parse(json, crate::doc::Format::Json).unwrap();
        derived(&root)
    }

    #[test]
    fn the_length_is_the_smallest_key_scaled_as_vllm_scales_it() {
        assert_eq!(of(r#"{"max_position_embeddings": 8192}"#).unwrap().tokens, 8192);
        // Llama 3.1: llama3 scaling is in max_position_embeddings already.
        let llama = r#"{"max_position_embeddings": 131072, "rope_scaling": {"factor": 8.0, "rope_type": "llama3", "original_max_position_embeddings": 8192}}"#;
        assert_eq!(of(llama).unwrap().tokens, 131072);
        // Qwen2.5 with YaRN enabled as its model card says: 4 x 32768.
        let qwen = r#"{"max_position_embeddings": 32768, "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}}"#;
        let q = of(qwen).unwrap();
        assert_eq!(q.tokens, 131072);
        assert!(q.why.contains("yarn rope scaling factor 4"), "{}", q.why);
        // DeepSeek-V3: YaRN from 4096 by 40.
        let ds = r#"{"max_position_embeddings": 163840, "rope_scaling": {"factor": 40, "original_max_position_embeddings": 4096, "type": "yarn"}}"#;
        assert_eq!(of(ds).unwrap().tokens, 163840);
        // Linear scaling multiplies; the smallest key counts.
        assert_eq!(of(r#"{"max_position_embeddings": 4096, "seq_length": 2048, "rope_scaling": {"type": "linear", "factor": 2}}"#).unwrap().tokens, 4096);
        assert_eq!(of(r#"{"model_type": "gemma3_text", "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}"#).unwrap().tokens, 131072);
        assert_eq!(of(r#"{"hidden_size": 1}"#), None);
    }
}
