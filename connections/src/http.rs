//! The one HTTP client every connection shares: blocking requests with a global timeout,
//! replies of any status read as data (a 429 or a 400 is an answer, not an error), and
//! transport errors scrubbed of the secret (Telegram puts its token in the URL).

use std::time::Duration;

use ureq::Agent;

use crate::Failure;

/// HTTP settings shared by the connections.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The most one request may take, connect to last byte (default 30 s).
    pub timeout: Duration,
    /// Open connections kept for reuse (default 64). Keep it at least the sink's worker
    /// count: a call without an idle connection pays a new TCP and TLS handshake.
    pub idle_connections: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            timeout: Duration::from_secs(30),
            idle_connections: 64,
        }
    }
}

impl HttpOptions {
    /// With `timeout` set.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// With `idle_connections` set.
    #[must_use]
    pub fn with_idle_connections(mut self, idle_connections: usize) -> Self {
        self.idle_connections = idle_connections;
        self
    }
}

/// A reply of any status.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: String,
    headers: ureq::http::HeaderMap,
}

impl Reply {
    /// A header's value as text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// A request body.
pub(crate) enum Body<'a> {
    None,
    Json(&'a serde_json::Value),
    Multipart(&'a crate::multipart::Form),
    /// `application/x-www-form-urlencoded` fields.
    Form(&'a [(&'a str, &'a str)]),
}

/// Blocking HTTP with one secret that never appears in an error.
pub(crate) struct Http {
    agent: Agent,
    secret: String,
}

impl Http {
    pub(crate) fn new(options: &HttpOptions, secret: &str) -> Http {
        let agent: Agent = Agent::config_builder()
            .timeout_global(Some(options.timeout))
            .http_status_as_error(false)
            .max_idle_connections(options.idle_connections)
            .max_idle_connections_per_host(options.idle_connections)
            .user_agent(concat!(
                "replystream-connections/",
                env!("CARGO_PKG_VERSION")
            ))
            .build()
            .into();
        Http {
            agent,
            secret: secret.to_owned(),
        }
    }

    /// Sends one request. A transport failure (DNS, connect, TLS, timeout) is a transient
    /// [`Failure`] without a wait; a request that cannot be written (an invalid URL) is a
    /// permanent one.
    pub(crate) fn request(
        &self,
        method: &str,
        url: &str,
        auth: Option<&str>,
        body: Body<'_>,
    ) -> Result<Reply, Failure> {
        let builder = ureq::http::Request::builder().method(method).uri(url);
        let builder = match auth {
            Some(a) => builder.header("Authorization", a),
            None => builder,
        };
        // A request that cannot be written (a URL made invalid by the API URL or the chat
        // id) fails the same way every time: permanent, not worth a retry.
        let unwritable = |e: ureq::http::Error| {
            Failure::permanent(format!("request: {}", self.scrub(&e.to_string())))
        };
        let result = match body {
            Body::None => self.agent.run(builder.body(()).map_err(unwritable)?),
            Body::Json(v) => self.agent.run(
                builder
                    .header("Content-Type", "application/json; charset=utf-8")
                    .body(v.to_string())
                    .map_err(unwritable)?,
            ),
            Body::Multipart(form) => self.agent.run(
                builder
                    .header("Content-Type", form.content_type())
                    .body(form.bytes())
                    .map_err(unwritable)?,
            ),
            Body::Form(fields) => self.agent.run(
                builder
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .body(url_encoded(fields))
                    .map_err(unwritable)?,
            ),
        };
        let mut response = result.map_err(|e| match e {
            ureq::Error::BadUri(why) => {
                Failure::permanent(format!("request: {}", self.scrub(&why)))
            }
            e => self.transport(&e.to_string()),
        })?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .body_mut()
            .read_to_string()
            .map_err(|e| self.transport(&e.to_string()))?;
        Ok(Reply {
            status,
            body,
            headers,
        })
    }

    fn transport(&self, error: &str) -> Failure {
        Failure::transient(None, format!("network: {}", self.scrub(error)))
    }

    /// `text` with the secret replaced.
    pub(crate) fn scrub(&self, text: &str) -> String {
        if self.secret.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.secret, "<token>")
        }
    }
}

/// `fields` as an `application/x-www-form-urlencoded` body (every byte but the unreserved
/// ones percent-encoded).
fn url_encoded(fields: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (name, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode_into(&mut out, name);
        out.push('=');
        encode_into(&mut out, value);
    }
    out
}

fn encode_into(out: &mut String, text: &str) {
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn form_fields_are_percent_encoded() {
        let body = super::url_encoded(&[("filename", "a b&c=é.png"), ("length", "12")]);
        assert_eq!(body, "filename=a%20b%26c%3D%C3%A9.png&length=12");
    }
}
