use super::*;

fn gqa(layers: u32, kv_heads: u32, head_dim: u32) -> Shape {
    Shape {
        layers,
        kv_heads,
        head_dim,
        mla: None,
        sliding_window: None,
        sliding_layers: 0,
        max_position_embeddings: Some(131072),
    }
}

fn sizing(shape: Shape, len: u32) -> Sizing {
    Sizing {
        shape,
        kv_bytes: 2.0,
        kv_cache_dtype: None,
        max_model_len: len,
        max_num_seqs: 1,
        max_num_seqs_set: false,
        utilization: VLLM_UTILIZATION,
        overhead: OVERHEAD_GIB * GIB,
    }
}

#[test]
fn fit_kv_heads_divide_by_tensor_parallelism_down_to_one_a_gpu() {
    // Llama 3.1 70B: 80 layers x 2 x 8 KV heads x 128 x 2 bytes = 327,680 a token.
    let s = gqa(80, 8, 128);
    assert_eq!(s.bytes_per_token(1, 1, 2.0), 327_680.0);
    // TP 4: 2 heads a GPU; TP 8: 1; TP 16: still 1 (replicated, not split).
    assert_eq!(s.bytes_per_token(4, 1, 2.0), 81_920.0);
    assert_eq!(s.bytes_per_token(8, 1, 2.0), 40_960.0);
    assert_eq!(s.bytes_per_token(16, 1, 2.0), 40_960.0);
    // PP 2: 40 layers a stage; PP 3: 27 (80 / 3 rounded up).
    assert_eq!(s.bytes_per_token(1, 2, 2.0), 163_840.0);
    assert_eq!(s.bytes_per_token(1, 3, 2.0), 27.0 * 4096.0);
}

#[test]
fn fit_latent_attention_is_one_vector_a_layer_on_every_rank() {
    // DeepSeek-V3: 61 layers x (512 + 64) x 2 bytes = 70,272 a token, at any TP.
    let s = Shape { mla: Some(Mla { kv_lora_rank: 512, qk_rope_head_dim: 64 }), ..gqa(61, 1, 0) };
    for tp in [1, 2, 8, 16] {
        assert_eq!(s.bytes_per_token(tp, 1, 2.0), 70_272.0);
    }
    assert_eq!(s.bytes_per_token(8, 1, 1.0), 35_136.0);
}

#[test]
fn fit_sliding_layers_hold_their_window_only() {
    // gpt-oss-120b: 36 layers, half of them a 128-token window, 8 KV heads of 64.
    let s = Shape { sliding_window: Some(128), sliding_layers: 18, ..gqa(36, 8, 64) };
    // A layer: 2 x 8 x 64 x 2 = 2,048 bytes a token.
    // 18 full layers x 131,072 tokens + 18 sliding layers x 128 tokens.
    assert_eq!(s.kv_bytes(1, 1, 2.0, 131_072, 1), 2048.0 * (18.0 * 131_072.0 + 18.0 * 128.0));
    // Shorter than the window, every layer holds the whole sequence.
    assert_eq!(s.kv_bytes(1, 1, 2.0, 100, 1), 2048.0 * 36.0 * 100.0);
    // Two stages: 18 layers each, 9 of them full.
    assert_eq!(s.stage_layers(2), (9, 9));
    // Never more than the stage.
    assert_eq!(s.stage_layers(36), (1, 0));
}

#[test]
fn fit_parts_and_the_largest_context_that_fits() {
    // Llama 3.1 8B on one L4 (24 GB: 23,034 MiB): weights 16.06 GB, 128 KiB a token.
    let s = sizing(gqa(32, 8, 128), 131_072);
    let parts = s.parts(16.06e9, 1, 1);
    assert_eq!(parts.kv, 16.0 * GIB);
    assert_eq!(parts.to_string(), "weights 15.0 GiB + KV 16.0 GiB for 131072 tokens x 1 + overhead 2.0 GiB");
    let usable = 0.92 * 23_034.0 * 1024.0 * 1024.0;
    assert!(parts.total() > usable);
    // usable - weights - overhead = 20.69 GiB - 14.96 - 2 = 3.74 GiB = 30,617 tokens of
    // 128 KiB: 29 x 1024 = 29,696 fits, 30 x 1024 = 30,720 does not.
    assert_eq!(s.largest_len(16.06e9, 1, 1, usable), Some(29_696));
    // Not even the weights: nothing.
    assert_eq!(s.largest_len(30e9, 1, 1, usable), None);
}

#[test]
fn fit_engines_are_told_what_was_checked() {
    let mut s = sizing(gqa(32, 8, 128), 29_696);
    assert_eq!(
        s.engine_args(Some(SizingFlags::Vllm)),
        ["--max-model-len", "29696", "--gpu-memory-utilization", "0.92"]
    );
    assert_eq!(
        s.engine_args(Some(SizingFlags::Sglang)),
        ["--context-length", "29696", "--mem-fraction-static", "0.92"]
    );
    assert!(s.engine_args(None).is_empty());
    s.max_num_seqs = 4;
    s.max_num_seqs_set = true;
    s.kv_cache_dtype = Some("fp8");
    s.utilization = 0.9;
    assert_eq!(
        s.engine_args(Some(SizingFlags::Vllm)),
        [
            "--max-model-len",
            "29696",
            "--gpu-memory-utilization",
            "0.9",
            "--max-num-seqs",
            "4",
            "--kv-cache-dtype",
            "fp8"
        ]
    );
    assert_eq!(
        s.engine_args(Some(SizingFlags::Sglang)),
        ["--context-length", "29696", "--mem-fraction-static", "0.9", "--kv-cache-dtype", "fp8_e4m3"]
    );
    s.kv_cache_dtype = Some("bf16");
    assert_eq!(s.engine_args(Some(SizingFlags::Vllm))[6..], ["--kv-cache-dtype", "bfloat16"]);
    assert_eq!(s.engine_args(Some(SizingFlags::Sglang)).len(), 4);
}
