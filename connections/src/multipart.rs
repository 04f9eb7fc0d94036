//! A `multipart/form-data` body (RFC 7578), for uploading local files: text fields and file
//! parts, built in memory (chat uploads are small).

/// A form being built.
pub(crate) struct Form {
    boundary: String,
    body: Vec<u8>,
}

impl Form {
    pub(crate) fn new() -> Form {
        // Random, so no file's bytes contain it by accident (a collision is 2^-64 per file).
        let boundary = format!("replystream-{:016x}{:016x}", fastrand_u64(), fastrand_u64());
        Form {
            boundary,
            body: Vec::new(),
        }
    }

    /// Adds a text field.
    pub(crate) fn text(&mut self, name: &str, value: &str) {
        self.head(name, None, None);
        self.body.extend_from_slice(value.as_bytes());
        self.body.extend_from_slice(b"\r\n");
    }

    /// Adds a file part.
    pub(crate) fn file(&mut self, name: &str, filename: &str, content_type: &str, bytes: &[u8]) {
        self.head(name, Some(filename), Some(content_type));
        self.body.extend_from_slice(bytes);
        self.body.extend_from_slice(b"\r\n");
    }

    fn head(&mut self, name: &str, filename: Option<&str>, content_type: Option<&str>) {
        let mut head = format!(
            "--{}\r\nContent-Disposition: form-data; name=\"{}\"",
            self.boundary,
            quoted(name)
        );
        if let Some(f) = filename {
            head.push_str(&format!("; filename=\"{}\"", quoted(f)));
        }
        head.push_str("\r\n");
        if let Some(t) = content_type {
            head.push_str(&format!("Content-Type: {t}\r\n"));
        }
        head.push_str("\r\n");
        self.body.extend_from_slice(head.as_bytes());
    }

    pub(crate) fn content_type(&self) -> String {
        format!("multipart/form-data; boundary={}", self.boundary)
    }

    /// The finished body.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut out = self.body.clone();
        out.extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        out
    }
}

/// A name or file name inside a quoted header parameter: quotes and line breaks escaped as
/// browsers do (RFC 7578 §4.2 leaves it to percent-encoding).
fn quoted(s: &str) -> String {
    s.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn fastrand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    h.finish()
}
