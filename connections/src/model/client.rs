//! One streamed request to a model API, read as it arrives.

use std::io::Read;
use std::time::Duration;

use replystream::OwnedInput;
use serde_json::json;

use super::{Decoder, ModelError, Protocol};

/// What to ask a model for. Its `Debug` form leaves the API key out.
#[derive(Clone)]
#[non_exhaustive]
pub struct ModelRequest {
    /// Which API the server speaks.
    pub protocol: Protocol,
    /// The API's base URL, up to the version (`https://api.openai.com/v1`,
    /// `https://api.anthropic.com/v1`, or any compatible server's).
    pub base_url: String,
    /// The API key (sent as `Authorization: Bearer`, or `x-api-key` for Anthropic).
    pub api_key: String,
    /// The model's name.
    pub model: String,
    /// The user's message.
    pub prompt: String,
    /// The most tokens to generate (Anthropic requires it; default 4096).
    pub max_tokens: u32,
    /// The longest the server may stay silent: before it answers, and between two pieces
    /// of the reply (default 120 s).
    pub stall_timeout: Duration,
}

impl std::fmt::Debug for ModelRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRequest")
            .field("protocol", &self.protocol)
            .field("base_url", &self.base_url)
            .field("api_key", &"<key>")
            .field("model", &self.model)
            .field("prompt", &self.prompt)
            .field("max_tokens", &self.max_tokens)
            .field("stall_timeout", &self.stall_timeout)
            .finish()
    }
}

impl ModelRequest {
    /// A request with the default limits.
    pub fn new(
        protocol: Protocol,
        base_url: &str,
        api_key: &str,
        model: &str,
        prompt: &str,
    ) -> ModelRequest {
        ModelRequest {
            protocol,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: api_key.to_owned(),
            model: model.to_owned(),
            prompt: prompt.to_owned(),
            max_tokens: 4096,
            stall_timeout: Duration::from_secs(120),
        }
    }
}

/// Sends `request` and calls `on_input` with each input as the reply streams in, until the
/// protocol's last event. A reply that breaks off, a status other than 200 (with what the
/// server said) and a malformed event are errors; what came before them was already handed
/// to `on_input`.
pub fn stream_reply(
    request: &ModelRequest,
    mut on_input: impl FnMut(OwnedInput),
) -> Result<(), ModelError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(15)))
        .timeout_recv_response(Some(request.stall_timeout))
        .timeout_per_read(Some(request.stall_timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let scrub = |text: String| {
        if request.api_key.is_empty() {
            text
        } else {
            text.replace(&request.api_key, "<key>")
        }
    };
    let messages = json!([{ "role": "user", "content": request.prompt }]);
    let (path, body) = match request.protocol {
        Protocol::OpenAiChat => (
            "chat/completions",
            json!({ "model": request.model, "stream": true, "messages": messages }),
        ),
        Protocol::OpenAiResponses => (
            "responses",
            json!({ "model": request.model, "stream": true, "input": request.prompt }),
        ),
        Protocol::Anthropic => (
            "messages",
            json!({ "model": request.model, "stream": true, "messages": messages,
                    "max_tokens": request.max_tokens }),
        ),
    };
    let url = format!("{}/{path}", request.base_url);
    let call = agent
        .post(&url)
        .header("Accept", "text/event-stream")
        .content_type("application/json");
    let call = match request.protocol {
        Protocol::Anthropic => call
            .header("x-api-key", &request.api_key)
            .header("anthropic-version", "2023-06-01"),
        _ => call.header("Authorization", &format!("Bearer {}", request.api_key)),
    };
    let mut response = call
        .send(body.to_string())
        .map_err(|e| ModelError::Request(scrub(e.to_string())))?;
    let status = response.status().as_u16();
    if status != 200 {
        let text = response.body_mut().read_to_string().unwrap_or_default();
        let text: String = text.chars().take(500).collect();
        return Err(ModelError::Request(scrub(format!("HTTP {status}: {text}"))));
    }
    let mut reader = response.into_body().into_reader();
    let mut decoder = Decoder::new(request.protocol);
    let mut buf = vec![0; 16 * 1024];
    let mut inputs = Vec::new();
    loop {
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) => {
                return Err(ModelError::Request(scrub(format!(
                    "reading the reply: {e}"
                ))));
            }
        };
        if n == 0 {
            return decoder.finish();
        }
        // The inputs decoded before a bad event in the same read are handed over first.
        let fed = decoder.feed(&buf[..n], &mut inputs);
        for input in inputs.drain(..) {
            on_input(input);
        }
        fed?;
        if decoder.is_done() {
            return Ok(());
        }
    }
}
