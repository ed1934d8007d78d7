//! The image each engine runs in when a profile names none: current
//! releases, each with its date and where that was read. docs/serving.md
//! shows the same table; a test holds the two together.

/// A node's processor architecture, as Kubernetes names it
/// (`kubernetes.io/arch`): an image runs only on the one it was built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Amd64,
    Arm64,
}

impl Arch {
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::Amd64 => "amd64",
            Arch::Arm64 => "arm64",
        }
    }

    /// `arm64` / `aarch64` (Slurm's `Arch=`, `uname -m`), `amd64` /
    /// `x86_64`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Arch> {
        match s.trim().to_ascii_lowercase().as_str() {
            "arm64" | "aarch64" | "arm64v8" => Some(Arch::Arm64),
            "amd64" | "x86_64" | "x86-64" => Some(Arch::Amd64),
            _ => None,
        }
    }
}

/// A node's processor architecture, when its labels say it: the
/// kubelet's `kubernetes.io/arch`, or `slurm/arch` (a Slurm node's `Arch=`,
/// which the import keeps).
pub fn arch_of(node: &crate::inventory::Node) -> Option<Arch> {
    ["kubernetes.io/arch", "slurm/arch"].iter().find_map(|k| node.labels.get(*k)).and_then(|v| Arch::parse(v))
}

/// One engine's default image on one architecture.
pub struct Image {
    pub engine: &'static str,
    pub arch: Arch,
    /// For GPU profiles; `None`: the engine publishes none for this
    /// architecture.
    pub gpu: Option<&'static str>,
    /// For CPU-only profiles (the same image where the engine has one).
    pub cpu: Option<&'static str>,
    /// When that release came out (YYYY-MM-DD, or YYYY-MM where only the
    /// month is known).
    pub released: &'static str,
    /// Where the tag (and its architecture) and date were read.
    pub source: &'static str,
}

pub const TABLE: &[Image] = &[
    Image {
        engine: "vllm",
        arch: Arch::Amd64,
        gpu: Some("vllm/vllm-openai:v0.29.0"),
        cpu: Some("vllm/vllm-openai:v0.29.0"),
        released: "2026-09-09",
        source: "coreweave/ml-containers PR #225 (vLLM v0.29.0)",
    },
    Image {
        engine: "vllm",
        arch: Arch::Arm64,
        gpu: Some("vllm/vllm-openai:v0.29.0-aarch64"),
        cpu: Some("vllm/vllm-openai-cpu:v0.29.0-arm64"),
        released: "2026-09-09",
        source: "vllm-project/vllm .buildkite/scripts/publish-release-images.sh (`v$VERSION-aarch64`, CPU `vllm-openai-cpu:v$VERSION-arm64`)",
    },
    Image {
        engine: "sglang",
        arch: Arch::Amd64,
        gpu: Some("lmsysorg/sglang:v0.5.20-cu130"),
        cpu: Some("lmsysorg/sglang:v0.5.20-cu130"),
        released: "2026-09",
        source: "Docker Hub lmsysorg/sglang, tag form of docker/Dockerfile (v0.5.20)",
    },
    Image {
        engine: "sglang",
        arch: Arch::Arm64,
        gpu: Some("lmsysorg/sglang:v0.5.20-cu130-arm64"),
        cpu: Some("lmsysorg/sglang:v0.5.20-cu130-arm64"),
        released: "2026-09",
        source: "Docker Hub lmsysorg/sglang, the `-cu130-arm64` tag form of its releases (v0.5.7, v0.5.9 in public repositories)",
    },
    Image {
        engine: "tgi",
        arch: Arch::Amd64,
        gpu: Some("ghcr.io/huggingface/text-generation-inference:3.3.7"),
        cpu: Some("ghcr.io/huggingface/text-generation-inference:3.3.7"),
        released: "2025-12-18",
        source: "git tag v3.3.7 of huggingface/text-generation-inference (in maintenance since)",
    },
    Image {
        engine: "tgi",
        arch: Arch::Arm64,
        gpu: None,
        cpu: None,
        released: "2025-12-18",
        source: "huggingface/text-generation-inference .github/workflows/build.yaml builds linux/amd64 only",
    },
    Image {
        engine: "llama.cpp",
        arch: Arch::Amd64,
        gpu: Some("ghcr.io/ggml-org/llama.cpp:server-cuda-b10472"),
        cpu: Some("ghcr.io/ggml-org/llama.cpp:server-b10472"),
        released: "2026-08-17",
        source: "llama.cpp release b10472; tags per .github/workflows/docker.yml",
    },
    Image {
        engine: "llama.cpp",
        arch: Arch::Arm64,
        gpu: None,
        cpu: Some("ghcr.io/ggml-org/llama.cpp:server-b10472"),
        released: "2026-08-17",
        source: "llama.cpp .github/workflows/docker.yml: `cpu` built for linux/amd64 and linux/arm64, `cuda` for linux/amd64 only",
    },
    Image {
        engine: "trtllm",
        arch: Arch::Amd64,
        gpu: Some("nvcr.io/nvidia/tensorrt-llm/release:1.2.1"),
        cpu: Some("nvcr.io/nvidia/tensorrt-llm/release:1.2.1"),
        released: "2026-04-16",
        source: "TensorRT-LLM 1.2.1, the stable release tensorrtllm_backend PR #853 moved to",
    },
    Image {
        engine: "trtllm",
        arch: Arch::Arm64,
        gpu: Some("nvcr.io/nvidia/tensorrt-llm/release:1.2.1"),
        cpu: Some("nvcr.io/nvidia/tensorrt-llm/release:1.2.1"),
        released: "2026-04-16",
        source: "the NGC release container is one multi-architecture tag (linux/amd64, linux/arm64: GH200, GB200)",
    },
    Image {
        engine: "ollama",
        arch: Arch::Amd64,
        gpu: Some("ollama/ollama:0.32.15"),
        cpu: Some("ollama/ollama:0.32.15"),
        released: "2026-08-19",
        source: "git tag v0.32.15 of ollama/ollama",
    },
    Image {
        engine: "ollama",
        arch: Arch::Arm64,
        gpu: Some("ollama/ollama:0.32.15"),
        cpu: Some("ollama/ollama:0.32.15"),
        released: "2026-08-19",
        source: "ollama/ollama .github/workflows/release.yaml: one tag for linux/amd64 and linux/arm64",
    },
];

/// One engine's default image on AMD GPUs: its ROCm build.
pub struct RocmImage {
    pub engine: &'static str,
    pub image: &'static str,
    /// When that release came out, as in `TABLE`.
    pub released: &'static str,
    /// Where the tag and date were read.
    pub source: &'static str,
}

/// The ROCm images, for replicas on AMD GPUs: the same releases as
/// `TABLE` where the project publishes a ROCm build of them. TensorRT-LLM
/// has none (it never runs on AMD GPUs).
pub const ROCM: &[RocmImage] = &[
    RocmImage {
        engine: "vllm",
        image: "vllm/vllm-openai-rocm:v0.29.0",
        released: "2026-09-09",
        source: "vLLM v0.29.0's ROCm image; tag named as the current vLLM serving target for MI355X in public repositories (2026-10)",
    },
    RocmImage {
        engine: "sglang",
        image: "lmsysorg/sglang:v0.5.20-rocm10-mi30x",
        released: "2026-09",
        source: "Docker Hub lmsysorg/sglang, tag form of docker/rocm.Dockerfile (v0.5.20, gfx942: MI300X/MI325X; MI350X/MI355X take -mi35x)",
    },
    RocmImage {
        engine: "tgi",
        image: "ghcr.io/huggingface/text-generation-inference:3.3.7-rocm",
        released: "2025-12-18",
        source: "git tag v3.3.7 of huggingface/text-generation-inference; `-rocm` tag form of its docs",
    },
    RocmImage {
        engine: "llama.cpp",
        image: "ghcr.io/ggml-org/llama.cpp:server-rocm-b10472",
        released: "2026-08-17",
        source: "llama.cpp release b10472; tags per .github/workflows/docker.yml",
    },
    RocmImage {
        engine: "ollama",
        image: "ollama/ollama:0.32.15-rocm",
        released: "2026-08-19",
        source: "git tag v0.32.15 of ollama/ollama; `-rocm` image of the release",
    },
];

/// The default image of an engine, for a GPU profile on this vendor's
/// GPUs or a CPU-only profile, on nodes of this architecture; `None`
/// where the engine publishes none for it (lint and render say so).
pub fn default_image_for(engine: &str, gpu: bool, vendor: crate::vendor::Vendor, arch: Arch) -> Option<&'static str> {
    if gpu
        && vendor == crate::vendor::Vendor::Amd
        && let Some(i) = ROCM.iter().find(|i| i.engine == engine)
    {
        return Some(i.image);
    }
    let i = TABLE.iter().find(|i| i.engine == engine && i.arch == arch)?;
    if gpu { i.gpu } else { i.cpu }
}

/// The default image of an engine, for a GPU profile on this vendor's
/// GPUs or a CPU-only profile (x86-64 nodes).
pub fn default_image_on(engine: &str, gpu: bool, vendor: crate::vendor::Vendor) -> &'static str {
    default_image_for(engine, gpu, vendor, Arch::Amd64).unwrap_or_else(|| default_image(engine, gpu))
}

/// The default image of an engine, for a GPU or a CPU-only profile, on
/// x86-64 nodes.
pub fn default_image(engine: &str, gpu: bool) -> &'static str {
    let i = TABLE.iter().find(|i| i.engine == engine && i.arch == Arch::Amd64).unwrap_or(&TABLE[TABLE.len() - 2]);
    (if gpu { i.gpu } else { i.cpu }).unwrap_or_default()
}

/// Whether an image brings Ray: llmgw knows it of the default images,
/// none of which does (vLLM's image stopped shipping it, and SGLang's
/// never did); an image of another name is the operator's to know.
pub fn ships_ray(image: &str) -> Option<bool> {
    let defaults = TABLE.iter().flat_map(|i| [i.gpu, i.cpu]).flatten().chain(ROCM.iter().map(|i| i.image));
    defaults.into_iter().any(|d| d == image).then_some(false)
}

/// A version from an image tag or an `engines` entry: `v0.11.1`,
/// `0.6.3.post1`, `0.12.0rc2+cu128` -> (0, 11, 1) ...; `None` when it does
/// not start with a number (`latest`, `nightly`, `unknown`).
pub fn version(s: &str) -> Option<(u32, u32, u32)> {
    let s = s.trim().trim_start_matches(['v', 'V']);
    let mut parts = s.split('.').map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// The tag of an image reference (`vllm/vllm-openai:v0.6.3` -> `v0.6.3`),
/// not a registry port (`localhost:5000/x` has none).
pub fn tag(image: &str) -> Option<&str> {
    let last = image.rsplit('/').next()?;
    let name = last.split('@').next()?;
    name.split_once(':').map(|(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_tags_are_read() {
        assert_eq!(version("v0.11.1"), Some((0, 11, 1)));
        assert_eq!(version("0.6.3.post1"), Some((0, 6, 3)));
        assert_eq!(version("0.12.0rc2+cu128"), Some((0, 12, 0)));
        assert_eq!(version("0.10"), Some((0, 10, 0)));
        assert_eq!(version("latest"), None);
        assert_eq!(tag("vllm/vllm-openai:v0.6.3"), Some("v0.6.3"));
        assert_eq!(tag("localhost:5000/vllm"), None);
        assert_eq!(tag("reg:5000/vllm/vllm-openai:v0.8.0@sha256:ab"), Some("v0.8.0"));
    }

    #[test]
    fn amd_gpus_get_the_rocm_build_and_nvidia_ones_keep_theirs() {
        use crate::vendor::Vendor;
        assert_eq!(default_image_on("vllm", true, Vendor::Amd), "vllm/vllm-openai-rocm:v0.29.0");
        assert_eq!(default_image_on("vllm", true, Vendor::Nvidia), default_image("vllm", true));
        assert_eq!(default_image_on("llama.cpp", false, Vendor::Amd), default_image("llama.cpp", false));
        for i in ROCM {
            let base = TABLE.iter().find(|t| t.engine == i.engine).unwrap();
            assert_eq!(i.released, base.released, "{}: the same release on both vendors", i.engine);
        }
    }

    #[test]
    fn every_engine_has_a_default() {
        for e in ["vllm", "sglang", "tgi", "llama.cpp", "trtllm", "ollama"] {
            assert!(TABLE.iter().any(|i| i.engine == e), "{e}");
        }
    }
}
