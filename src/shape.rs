//! A model's own shape, and what one replica of it needs of each GPU:
//! its share of the weights, the KV cache of the sequences it must hold at
//! full length, and the overhead of running at all (docs/catalog.md,
//! "Memory fit").
//!
//! The KV cache is sized the way vLLM sizes it: per layer and token, 2 x
//! the KV heads a tensor-parallel rank holds (at least one: heads are
//! replicated, never split below one a GPU) x the head size x the bytes
//! of the cache's type; a multi-head latent attention layer (DeepSeek)
//! keeps one latent vector of `kv_lora_rank + qk_rope_head_dim` instead,
//! the same on every rank. Pipeline parallelism splits the layers, and a
//! sliding-window layer never holds more than its window.

/// Bytes in a GiB, the unit every per-GPU size is said in.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The share of a GPU's memory vLLM uses by default: its
/// `--gpu-memory-utilization` (docs/catalog.md cites the release).
pub const VLLM_UTILIZATION: f64 = 0.92;

/// Room for activations, CUDA graphs and NCCL buffers on each GPU, by
/// default, in GiB.
pub const OVERHEAD_GIB: f64 = 2.0;

/// Multi-head latent attention: one compressed vector per token and layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mla {
    pub kv_lora_rank: u32,
    pub qk_rope_head_dim: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub layers: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
    pub mla: Option<Mla>,
    /// The tokens a sliding-window layer keeps, and how many layers slide.
    pub sliding_window: Option<u32>,
    pub sliding_layers: u32,
    /// The context the model was trained for: the default `max_model_len`.
    pub max_position_embeddings: Option<u32>,
}

impl Shape {
    /// Bytes one layer keeps per token on one rank of a `tp`-wide group.
    pub fn layer_bytes(&self, tp: u32, kv_bytes: f64) -> f64 {
        match self.mla {
            Some(m) => f64::from(m.kv_lora_rank) * kv_bytes + f64::from(m.qk_rope_head_dim) * kv_bytes,
            None => 2.0 * f64::from((self.kv_heads / tp.max(1)).max(1)) * f64::from(self.head_dim) * kv_bytes,
        }
    }

    /// The layers of the busiest of `pp` pipeline stages, as (full,
    /// sliding): the layers divided evenly, rounded up, and of them the
    /// full-attention layers divided evenly, rounded up (so a stage never
    /// counts fewer full layers than its share). With one stage, exactly
    /// the model's.
    pub fn stage_layers(&self, pp: u32) -> (u32, u32) {
        let pp = pp.max(1);
        let stage = self.layers.div_ceil(pp);
        let sliding = if self.sliding_window.is_some() { self.sliding_layers.min(self.layers) } else { 0 };
        let full = (self.layers - sliding).div_ceil(pp).min(stage);
        (full, stage - full)
    }

    /// KV bytes per token of context on one GPU, every layer of its stage
    /// counted as holding it (a sliding layer does, up to its window).
    pub fn bytes_per_token(&self, tp: u32, pp: u32, kv_bytes: f64) -> f64 {
        f64::from(self.layers.div_ceil(pp.max(1))) * self.layer_bytes(tp, kv_bytes)
    }

    /// KV bytes on one GPU for `seqs` sequences of `len` tokens each.
    pub fn kv_bytes(&self, tp: u32, pp: u32, kv_bytes: f64, len: u32, seqs: u32) -> f64 {
        let (full, sliding) = self.stage_layers(pp);
        let window = self.sliding_window.map_or(0, |w| w.min(len));
        let tokens = f64::from(full) * f64::from(len) + f64::from(sliding) * f64::from(window);
        self.layer_bytes(tp, kv_bytes) * tokens * f64::from(seqs)
    }
}

/// A profile's settings for the fit of a model with a shape, resolved
/// against the model's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Sizing {
    pub shape: Shape,
    /// Bytes of one element of the KV cache.
    pub kv_bytes: f64,
    /// The cache type to tell the engine: set only when the profile asks
    /// for one other than the model's own (`fp8`, ...).
    pub kv_cache_dtype: Option<&'static str>,
    pub max_model_len: u32,
    pub max_num_seqs: u32,
    /// Whether the profile said `max_num_seqs` (render passes it only then).
    pub max_num_seqs_set: bool,
    /// The share of the device's memory the engine may use.
    pub utilization: f64,
    /// Bytes per GPU for everything but weights and KV cache.
    pub overhead: f64,
}

/// What one GPU of a replica holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parts {
    pub weights: f64,
    pub kv: f64,
    pub tokens: u32,
    pub seqs: u32,
    pub overhead: f64,
}

impl Parts {
    pub fn total(&self) -> f64 {
        self.weights + self.kv + self.overhead
    }
}

impl std::fmt::Display for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "weights {:.1} GiB + KV {:.1} GiB for {} tokens x {} + overhead {:.1} GiB",
            self.weights / GIB,
            self.kv / GIB,
            self.tokens,
            self.seqs,
            self.overhead / GIB
        )
    }
}

impl Sizing {
    /// One GPU's part of a replica of `weights` bytes over `tp` x `pp` GPUs.
    pub fn parts(&self, weights: f64, tp: u32, pp: u32) -> Parts {
        self.parts_at(weights, tp, pp, self.max_model_len)
    }

    fn parts_at(&self, weights: f64, tp: u32, pp: u32, len: u32) -> Parts {
        let (tp, pp) = (tp.max(1), pp.max(1));
        Parts {
            weights: weights / (f64::from(tp) * f64::from(pp)),
            kv: self.shape.kv_bytes(tp, pp, self.kv_bytes, len, self.max_num_seqs),
            tokens: len,
            seqs: self.max_num_seqs,
            overhead: self.overhead,
        }
    }

    /// The largest `max_model_len`, a multiple of 1024 and no more than
    /// the model's context (or the profile's, when larger), at which one
    /// GPU's part fits in `usable` bytes; `None` when not even 1024 does.
    pub fn largest_len(&self, weights: f64, tp: u32, pp: u32, usable: f64) -> Option<u32> {
        let top = self.shape.max_position_embeddings.unwrap_or(0).max(self.max_model_len) / 1024;
        let fits = |k: u32| self.parts_at(weights, tp, pp, k * 1024).total() <= usable;
        if top == 0 || !fits(1) {
            return None;
        }
        // The need grows with the length: the last k that fits, by halving.
        let (mut lo, mut hi) = (1, top);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) { lo = mid } else { hi = mid - 1 }
        }
        Some(lo * 1024)
    }

    /// The engine arguments that make it size its cache as checked:
    /// vLLM's `--max-model-len` and `--gpu-memory-utilization` (and the
    /// profile's `--max-num-seqs` and `--kv-cache-dtype` when it sets
    /// them), SGLang's `--context-length` and `--mem-fraction-static` (and
    /// an FP8 cache), llama.cpp's `--ctx-size` (the context times
    /// `max_num_seqs`, and `--parallel` when the profile sets it). Ollama
    /// reads its context from the environment (`launch`); the others are
    /// told nothing.
    pub fn engine_args(&self, flags: Option<SizingFlags>) -> Vec<String> {
        let mut v = Vec::new();
        let (len, util) = (self.max_model_len.to_string(), self.utilization.to_string());
        match flags {
            Some(SizingFlags::Vllm) => {
                v.extend(["--max-model-len".to_string(), len, "--gpu-memory-utilization".to_string(), util]);
                if self.max_num_seqs_set {
                    v.extend(["--max-num-seqs".to_string(), self.max_num_seqs.to_string()]);
                }
                if let Some(d) = self.kv_cache_dtype {
                    let name = match d {
                        "bf16" => "bfloat16",
                        "fp16" => "float16",
                        other => other,
                    };
                    v.extend(["--kv-cache-dtype".to_string(), name.to_string()]);
                }
            }
            Some(SizingFlags::Sglang) => {
                v.extend(["--context-length".to_string(), len, "--mem-fraction-static".to_string(), util]);
                let name = match self.kv_cache_dtype {
                    Some("fp8" | "fp8_e4m3") => Some("fp8_e4m3"),
                    Some("fp8_e5m2") => Some("fp8_e5m2"),
                    _ => None,
                };
                if let Some(n) = name {
                    v.extend(["--kv-cache-dtype".to_string(), n.to_string()]);
                }
            }
            // llama-server's KV cache holds --ctx-size tokens in all,
            // shared by its slots; without it, the model's training context.
            Some(SizingFlags::LlamaCpp) => {
                let total = u64::from(self.max_model_len) * u64::from(self.max_num_seqs.max(1));
                v.extend(["--ctx-size".to_string(), total.to_string()]);
                if self.max_num_seqs_set {
                    v.extend(["--parallel".to_string(), self.max_num_seqs.to_string()]);
                }
            }
            None => {}
        }
        v
    }
}

/// Which flags an engine takes for the cache size the fit checked (the
/// engine table, `engines::Engine::sizing`, says which engine takes which).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizingFlags {
    /// `--max-model-len`, `--gpu-memory-utilization` (vLLM).
    Vllm,
    /// `--context-length`, `--mem-fraction-static` (SGLang).
    Sglang,
    /// `--ctx-size` (llama.cpp's server).
    LlamaCpp,
}

/// The KV cache types a profile may name, and their bytes.
pub const KV_DTYPES: &[(&str, f64)] =
    &[("auto", 2.0), ("bf16", 2.0), ("fp16", 2.0), ("fp8", 1.0), ("fp8_e4m3", 1.0), ("fp8_e5m2", 1.0)];

#[cfg(test)]
mod tests;
