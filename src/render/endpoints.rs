//! What `--endpoints` writes: llmgw's own list of every replica's URL, or
//! the same as a LiteLLM proxy config, whose router balances the entries
//! that share a model name.

use serde::Serialize;

use super::Endpoint;

/// `--endpoints-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Json,
    Litellm,
}

/// What to warn of in the file: a model name with `*` is a pattern to
/// LiteLLM's router, which would send it other models' requests.
pub fn warnings(format: Format, list: &[Endpoint<'_>]) -> Vec<crate::diag::Diag> {
    let mut starred: Vec<&str> = list.iter().map(|e| e.model).filter(|m| m.contains('*')).collect();
    starred.dedup();
    if format != Format::Litellm || starred.is_empty() {
        return Vec::new();
    }
    vec![
        crate::diag::Diag::warning(
            crate::diag::Code::LitellmWildcard,
            format!(
                "{}: LiteLLM takes `*` in a model name as a wildcard, and routes other models' requests to it",
                crate::diag::shorten(&starred, 5)
            ),
        )
        .help("name the model without `*`"),
    ]
}

/// The file's text.
pub fn text(format: Format, list: &[Endpoint<'_>]) -> String {
    match format {
        Format::Json => super::endpoints_json(list),
        Format::Litellm => litellm(list),
    }
}

#[derive(Serialize)]
struct Config<'a> {
    model_list: Vec<Deployment<'a>>,
}

#[derive(Serialize)]
struct Deployment<'a> {
    model_name: &'a str,
    litellm_params: Params,
}

#[derive(Serialize)]
struct Params {
    model: String,
    api_base: String,
    /// For the `openai` provider, which sends the proxy's own
    /// `OPENAI_API_KEY` (a real OpenAI key, often) to the server when
    /// the entry names none, and refuses to start a request without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    api_key: Option<&'static str>,
}

/// LiteLLM's provider for a replica, as the engine table says: vLLM has
/// its own (`hosted_vllm`); every other engine llmgw starts serves the
/// OpenAI API under `/v1`, which LiteLLM's `openai` speaks.
fn provider(engine: &str) -> &'static str {
    crate::engines::find(engine).map_or("openai", |e| e.litellm_provider)
}

/// A LiteLLM proxy config: `model_list`, one entry per replica, each
/// naming the model as clients ask for it and the replica's OpenAI base.
pub fn litellm(list: &[Endpoint<'_>]) -> String {
    let config = Config {
        model_list: list
            .iter()
            .map(|e| Deployment {
                model_name: e.model,
                litellm_params: Params {
                    model: format!("{}/{}", provider(e.engine), e.model),
                    api_base: format!("{}/v1", e.url),
                    api_key: (provider(e.engine) == "openai").then_some("none"),
                },
            })
            .collect(),
    };
    let mut s = String::from("# A LiteLLM proxy config written by llmgw render: one entry per replica.\n");
    // Strings and lists only, into a String: serialising cannot fail.
    let _ = serde_saphyr::to_fmt_writer(&mut s, &config);
    s
}
