//! The memory fit from a model's own shape (docs/catalog.md, "Memory
//! fit"), on the real config.json files of public models shipped under
//! tests/data/models (PROVENANCE.md there says where each comes from).
//!
//! Each number below is worked out by hand from the config's values, in
//! the comments beside it, and llmgw must reach it exactly. Then the
//! bytes a token are held to vLLM's own formula, rewritten here from its
//! sources and fed the raw JSON, not llmgw's reading of it.

use llmgw::catalog::{Catalog, Profile};
use llmgw::diag::source;

use crate::common::*;

const MIB: f64 = 1024.0 * 1024.0;
/// What vLLM may use of an H100 of the example fleet (81,559 MiB) at its
/// default `--gpu-memory-utilization` of 0.92: 78,679,145,185 bytes.
const H100: f64 = 0.92 * 81559.0 * MIB;
/// Likewise an L40S of the example fleet (46,068 MiB): 44,441,335,234 bytes.
const L40S: f64 = 0.92 * 46068.0 * MIB;

/// A catalog that sits beside the configs, so `config = "x.json"` is read
/// from tests/data/models.
fn catalog(text: &str) -> Catalog {
    let name = root().join("tests/data/models/catalog.toml");
    let (cat, diags) = llmgw::catalog::check(&source(name.to_str().unwrap(), text.to_string()));
    cat.unwrap_or_else(|| panic!("{diags:?}"))
}

fn profile<'c>(cat: &'c Catalog, model: &str, name: &str) -> &'c Profile {
    let m = cat.models.iter().find(|m| m.name == model).unwrap();
    m.profiles.iter().find(|p| p.name == name).unwrap()
}

/// KV bytes a token of the whole replica (one GPU, one stage) at the
/// model's own cache type.
fn bytes_per_token(p: &Profile) -> f64 {
    let s = p.memory.sizing.as_ref().expect("a shape");
    s.shape.bytes_per_token(1, 1, s.kv_bytes)
}

fn need(p: &Profile) -> f64 {
    llmgw::placement::need(p).expect("a size").bytes
}

fn assert_bytes(got: f64, want: f64) {
    assert!((got - want).abs() < 1.0, "{got} bytes, the hand says {want}");
}

const MODELS: &str = r#"
[[model]]
name = "llama-3.1-8b"
config = "llama-3.1-8b.json"
params_b = 8.03
  [[model.profile]]
  name = "h100"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"

[[model]]
name = "llama-3.1-70b"
config = "llama-3.1-70b.json"
params_b = 70.6
  [[model.profile]]
  name = "h100-tp4"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  gpus_per_node = 4
  priority = 1
  [[model.profile]]
  name = "l40s-tp4"
  engine = "vllm"
  gpu_class = "l40s"
  gpus_per_node = 4

[[model]]
name = "llama-3.1-405b"
config = "llama-3.1-405b.json"
params_b = 405.9
  [[model.profile]]
  name = "h100-tp8-fp8"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  gpus_per_node = 8
  dtype = "fp8"

[[model]]
name = "qwen2.5-72b"
config = "qwen2.5-72b.json"
params_b = 72.7
  [[model.profile]]
  name = "h100-tp4"
  engine = "sglang"
  gpu_class = "h100-80gb-hbm3"
  gpus_per_node = 4

[[model]]
name = "mixtral-8x7b"
config = "mixtral-8x7b.json"
params_b = 46.7
  [[model.profile]]
  name = "h100-tp2"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  gpus_per_node = 2

[[model]]
name = "deepseek-v3"
config = "deepseek-v3.json"
params_b = 671
  [[model.profile]]
  name = "sglang-2x8"
  engine = "sglang"
  gpu_class = "h100-80gb-hbm3"
  gpus_per_node = 8
  nodes = 2
  priority = 1
  [[model.profile]]
  name = "vllm-2x8"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  gpus_per_node = 8
  nodes = 2

[[model]]
name = "gpt-oss-120b"
config = "gpt-oss-120b.json"
params_b = 116.83
  [[model.profile]]
  name = "h100"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
"#;

#[test]
fn fit_llama_3_1_8b_from_its_config() {
    let cat = catalog(MODELS);
    let p = profile(&cat, "llama-3.1-8b", "h100");
    // 32 layers x 2 (K and V) x 8 KV heads x 128 (4096 / 32 heads) x 2 bytes (bf16).
    assert_eq!(bytes_per_token(p), 131_072.0);
    // One H100, at its own 131,072 tokens: 8.03e9 x 2 bytes of weights
    // + 131,072 B x 131,072 tokens (16 GiB) + 2 GiB
    // = 16,060,000,000 + 17,179,869,184 + 2,147,483,648.
    assert_bytes(need(p), 35_387_352_832.0);
    assert!(need(p) <= H100);
}

#[test]
fn fit_llama_3_1_70b_from_its_config() {
    let cat = catalog(MODELS);
    let p = profile(&cat, "llama-3.1-70b", "h100-tp4");
    // 80 layers x 2 x 8 x 128 x 2 bytes.
    assert_eq!(bytes_per_token(p), 327_680.0);
    // TP 4: 70.6e9 x 2 / 4 of weights; 2 KV heads a GPU: 80 x 2 x 2 x 128 x 2
    // = 81,920 B a token x 131,072 (10 GiB); + 2 GiB
    // = 35,300,000,000 + 10,737,418,240 + 2,147,483,648.
    assert_bytes(need(p), 48_184_901_888.0);
    assert!(need(p) <= H100);
    // The same on four L40S (44.4e9 usable each) does not fit.
    let l40s = profile(&cat, "llama-3.1-70b", "l40s-tp4");
    assert_bytes(need(l40s), 48_184_901_888.0);
    assert!(need(l40s) > L40S);
}

#[test]
fn fit_llama_3_1_405b_in_fp8_from_its_config() {
    let cat = catalog(MODELS);
    let p = profile(&cat, "llama-3.1-405b", "h100-tp8-fp8");
    // 126 layers x 2 x 8 x 128 x 2 bytes: quantised weights leave the cache bf16.
    assert_eq!(bytes_per_token(p), 516_096.0);
    // TP 8: 405.9e9 x 1 byte (the profile's fp8) / 8; 1 KV head a GPU:
    // 126 x 2 x 1 x 128 x 2 = 64,512 B x 131,072; + 2 GiB
    // = 50,737,500,000 + 8,455,716,864 + 2,147,483,648.
    assert_bytes(need(p), 61_340_700_512.0);
    assert!(need(p) <= H100);
}

#[test]
fn fit_qwen2_5_72b_from_its_config() {
    let cat = catalog(MODELS);
    let p = profile(&cat, "qwen2.5-72b", "h100-tp4");
    // 80 layers x 2 x 8 x 128 (8192 / 64) x 2; its sliding_window names no
    // sliding layer (use_sliding_window is false, no layer_types).
    assert_eq!(bytes_per_token(p), 327_680.0);
    // TP 4 at its 32,768 tokens: 72.7e9 x 2 / 4 + 81,920 x 32,768 + 2 GiB
    // = 36,350,000,000 + 2,684,354,560 + 2,147,483,648.
    assert_bytes(need(p), 41_181_838_208.0);
}

#[test]
fn fit_mixtral_8x7b_from_its_config() {
    let cat = catalog(MODELS);
    let p = profile(&cat, "mixtral-8x7b", "h100-tp2");
    // 32 layers x 2 x 8 x 128 (4096 / 32) x 2: the experts add weights, not cache.
    assert_eq!(bytes_per_token(p), 131_072.0);
    // TP 2 at 32,768 tokens: 46.7e9 x 2 / 2 + (32 x 2 x 4 x 128 x 2 = 65,536) x 32,768 + 2 GiB
    // = 46,700,000,000 + 2,147,483,648 + 2,147,483,648.
    assert_bytes(need(p), 50_994_967_296.0);
    assert!(need(p) <= H100);
}

#[test]
fn fit_deepseek_v3_from_its_config() {
    let cat = catalog(MODELS);
    let p = profile(&cat, "deepseek-v3", "sglang-2x8");
    // Latent attention: 61 layers x (512 + 64) x 2 bytes, not 61 x 2 x 128 x 128 x 2.
    assert_eq!(bytes_per_token(p), 70_272.0);
    // The config's fp8 quantisation: 1 byte a parameter. SGLang runs one
    // TP group of 16 across both nodes, and the latent vector is on every
    // rank: 671e9 / 16 + 70,272 x 163,840 tokens + 2 GiB
    // = 41,937,500,000 + 11,513,364,480 + 2,147,483,648.
    assert_bytes(need(p), 55_598_348_128.0);
    // vLLM: TP 8 and a pipeline stage a node, 31 of the 61 layers on the
    // busiest: 41,937,500,000 + 31 x 1,152 x 163,840 (5,851,054,080) + 2 GiB.
    assert_bytes(need(profile(&cat, "deepseek-v3", "vllm-2x8")), 49_936_037_728.0);
}

#[test]
fn fit_gpt_oss_120b_from_its_config() {
    let cat = catalog(MODELS);
    let p = profile(&cat, "gpt-oss-120b", "h100");
    // 36 layers x 2 x 8 x 64 (head_dim) x 2 bytes (no torch_dtype: bf16).
    assert_eq!(bytes_per_token(p), 73_728.0);
    // mxfp4: 0.5 byte and a scale byte a 32 = 0.53125 a parameter.
    // One H100 at 131,072 tokens: 18 full layers x 2,048 B x 131,072
    // + 18 sliding layers x 2,048 B x 128 (the window) + 2 GiB
    // = 62,065,937,500 + 4,831,838,208 + 4,718,592 + 2,147,483,648.
    assert_bytes(need(p), 69_049_977_948.0);
    assert!(need(p) <= H100, "gpt-oss-120b runs on one 80 GB GPU");
}

/// vLLM's KV bytes a token on one rank, as its sources compute them
/// (vllm/v1/kv_cache_interface.py: `FullAttentionSpec.real_page_size_bytes`
/// = block_size x num_kv_heads x (head_size + head_size_v) x dtype size,
/// `MLAAttentionSpec` = block_size x num_kv_heads x head_size x dtype size;
/// vllm/config/model.py: `get_num_kv_heads` = 1 with MLA, else max(1,
/// total // tp); `get_head_size` = kv_lora_rank + qk_rope_head_dim with
/// MLA, else head_dim, else hidden_size // num_attention_heads), read from
/// the raw config.json; the page of one layer over its block of tokens,
/// summed over the layers.
fn vllm_bytes_per_token(cfg: &serde_json::Value, tp: u64) -> u64 {
    let get = |k: &str| cfg.get(k).and_then(serde_json::Value::as_u64);
    let block_size = 16;
    let dtype_size = 2;
    let use_mla = get("kv_lora_rank").is_some();
    let total_kv = get("num_key_value_heads").or(get("num_attention_heads")).unwrap();
    let num_kv_heads = if use_mla { 1 } else { (total_kv / tp).max(1) };
    let head_size = if use_mla {
        get("kv_lora_rank").unwrap() + get("qk_rope_head_dim").unwrap_or(0)
    } else {
        get("head_dim").unwrap_or_else(|| get("hidden_size").unwrap() / get("num_attention_heads").unwrap())
    };
    let page = if use_mla {
        block_size * num_kv_heads * head_size * dtype_size
    } else {
        block_size * num_kv_heads * (head_size + head_size) * dtype_size
    };
    get("num_hidden_layers").unwrap() * page / block_size
}

#[test]
fn fit_bytes_a_token_are_vllms_on_every_shipped_config() {
    let cat = catalog(MODELS);
    for m in &cat.models {
        let path = root().join("tests/data/models").join(format!("{}.json", m.name));
        let cfg: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let shape = &m.shape.as_ref().unwrap().shape;
        for tp in [1, 2, 4, 8, 16] {
            let want = vllm_bytes_per_token(&cfg, tp) as f64;
            assert_eq!(shape.bytes_per_token(tp as u32, 1, 2.0), want, "{} at TP {tp}", m.name);
        }
    }
}

#[test]
fn fit_lint_says_what_context_fits_beside_what_tp_does() {
    let dir = tempfile::tempdir().unwrap();
    let config = std::fs::read_to_string(root().join("tests/data/models/llama-3.1-8b.json")).unwrap();
    write(dir.path(), "configs/llama.json", &config);
    let c = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"llama-3.1-8b\"\nconfig = \"configs/llama.json\"\nparams_b = 8.03\n\
         [[model.profile]]\nname = \"l4\"\nengine = \"vllm\"\ngpu_class = \"nvidia-l4-24gb\"\n",
    );
    let out = run(&["lint", c.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "llmgw::fit::margins");
    assert_eq!(d["message"], "`llama-3.1-8b` does not fit on 1 l4-24gb GPU at 131072 tokens x 1 (profile `l4`)");
    // 24 GB from the class name, 0.92 of it usable: 22,080,000,000 bytes;
    // less 16,060,000,000 of weights and 2 GiB leaves 3,872,516,352 bytes,
    // 29,544 tokens of 128 KiB: 28 x 1024 fit, 29 x 1024 do not.
    let help = d["help"].as_str().unwrap();
    assert!(
        help.starts_with("weights 15.0 GiB + KV 16.0 GiB for 131072 tokens x 1 + overhead 2.0 GiB = 33.0 GiB"),
        "{help}"
    );
    assert!(help.ends_with("max_model_len = 28672 would fit, or gpus_per_node = 2 would fit"), "{help}");
}

/// Bad shapes and settings: errors where they are written, in the catalog
/// or in the config.json, lint exit 1 and place exit 2.
#[test]
fn fit_a_shape_that_cannot_be_used_is_an_error_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "configs/bad.json", "{\"num_hidden_layers\": 32, oops}");
    write(dir.path(), "configs/short.json", "{\"hidden_size\": 4096}");
    let profile = "[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100\"\n";
    let cases = [
        (format!("[[model]]\nname = \"m\"\nconfig = \"configs/none.json\"\n{profile}"), "llmgw::io", "c.toml"),
        (format!("[[model]]\nname = \"m\"\nconfig = \"configs/bad.json\"\n{profile}"), "llmgw::syntax", "bad.json"),
        (
            format!("[[model]]\nname = \"m\"\nconfig = \"configs/short.json\"\n{profile}"),
            "llmgw::schema::missing-field",
            "short.json",
        ),
        (
            format!(
                "[[model]]\nname = \"m\"\nconfig = \"configs/bad.json\"\narch = {{ layers = 2, kv_heads = 1, head_dim = 8 }}\n{profile}"
            ),
            "llmgw::catalog::shape",
            "c.toml",
        ),
        (
            format!("[[model]]\nname = \"m\"\nparams_b = 8\n{profile}max_model_len = 8192\n"),
            "llmgw::fit::no-shape",
            "c.toml",
        ),
        (
            format!("[[model]]\nname = \"m\"\narch = {{ layers = 2, kv_heads = 1, head_dim = 8 }}\n{profile}"),
            "llmgw::schema::missing-field",
            "c.toml",
        ),
        (
            format!(
                "[[model]]\nname = \"m\"\narch = {{ layers = 2, kv_heads = 1, head_dim = 8, max_position_embeddings = 64 }}\n{profile}gpu_memory_utilization = 0\n"
            ),
            "llmgw::schema::out-of-range",
            "c.toml",
        ),
        (
            format!(
                "[[model]]\nname = \"m\"\narch = {{ layers = 2, kv_heads = 1, head_dim = 8, max_position_embeddings = 64 }}\n{profile}kv_cache_dtype = \"fp4\"\n"
            ),
            "llmgw::catalog::unknown-dtype",
            "c.toml",
        ),
        (
            format!(
                "[[model]]\nname = \"m\"\narch = {{ layers = 2, kv_heads = 1, head_dim = 8, sliding_layers = 1 }}\n{profile}"
            ),
            "llmgw::catalog::shape",
            "c.toml",
        ),
    ];
    for (text, want, file) in cases {
        let c = write(dir.path(), "c.toml", &text);
        let out = run(&["lint", c.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code(&out), 1, "{text}\n{}", transcript(&out));
        let v = json(&out);
        let d = &v["diagnostics"][0];
        assert_eq!(d["code"], want, "{text}\n{}", transcript(&out));
        assert!(d["file"].as_str().unwrap().ends_with(file), "{text}\n{}", transcript(&out));
        assert!(d["line"].as_u64().is_some(), "{}", transcript(&out));
        let out = run(&["place", c.to_str().unwrap(), "-i", "examples/fleet.toml"]);
        assert_eq!(code(&out), 2, "{}", transcript(&out));
    }
}

/// `config` is relative to the catalog's folder, and for a catalog on
/// standard input to the working directory; `-` never reads standard input.
#[test]
fn fit_configs_are_found_beside_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let config = std::fs::read_to_string(root().join("tests/data/models/mixtral-8x7b.json")).unwrap();
    write(dir.path(), "sub/configs/mixtral.json", &config);
    let text = "[[model]]\nname = \"mixtral\"\nconfig = \"configs/mixtral.json\"\nparams_b = 46.7\n\
                [[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n";
    let c = write(dir.path(), "sub/c.toml", text);
    let out = run(&["lint", c.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let mut child = llmgw()
        .args(["lint", "-"])
        .current_dir(dir.path().join("sub"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let dash = text.replace("configs/mixtral.json", "-");
    let mut child = llmgw()
        .args(["lint", "-"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(dash.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(transcript(&out).contains("cannot read ./-"), "{}", transcript(&out));
}

/// What was checked is what the engines are told; a model without a shape
/// renders as before, and the profile's own args still come last.
#[test]
fn fit_render_tells_the_engine_what_was_checked() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = crate::render::fleet(dir.path());
    for m in ["llama-3.1-8b", "deepseek-v3"] {
        let config = std::fs::read_to_string(root().join(format!("tests/data/models/{m}.json"))).unwrap();
        write(dir.path(), &format!("configs/{m}.json"), &config);
    }
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"deepseek-v3\"\nsource = \"deepseek-ai/DeepSeek-V3\"\nconfig = \"configs/deepseek-v3.json\"\nparams_b = 671\n\
         [[model.profile]]\nname = \"2x8\"\nengine = \"sglang\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n\
         kv_cache_dtype = \"fp8\"\nmax_model_len = 65536\n\
         [[model]]\nname = \"llama-3.1-8b\"\nsource = \"meta-llama/Llama-3.1-8B-Instruct\"\nconfig = \"configs/llama-3.1-8b.json\"\nparams_b = 8.03\n\
         [[model.profile]]\nname = \"mig\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\nmig_profile = \"1g.10gb\"\n\
         max_model_len = 4096\nmax_num_seqs = 4\ngpu_memory_utilization = 0.9\nargs = [\"--enable-prefix-caching\"]\n\
         [[model]]\nname = \"plain\"\nsource = \"org/plain\"\n\
         [[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\nmig_profile = \"1g.10gb\"\n",
    );
    let plan = dir.path().join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let args = ["render", "slurm", plan.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()];
    let out = run(&[&args[..], &["-i", fleet.to_str().unwrap()]].concat());
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    let serve: Vec<&str> =
        text.lines().filter(|l| l.contains("vllm serve") || l.contains("sglang.launch_server")).collect();
    assert!(
        serve.iter().any(|l| l.ends_with(
            "--served-model-name llama-3.1-8b --max-model-len 4096 --gpu-memory-utilization 0.9 --max-num-seqs 4 --enable-prefix-caching"
        )),
        "{text}"
    );
    assert!(
        serve.iter().any(|l| l.contains(
            "--served-model-name deepseek-v3 --context-length 65536 --mem-fraction-static 0.92 --kv-cache-dtype fp8_e4m3"
        )),
        "{text}"
    );
    assert!(serve.iter().any(|l| l.ends_with("--served-model-name plain")), "{text}");
}
