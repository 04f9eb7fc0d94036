//! Which media references written by the model may be sent (SPEC §17).

use std::borrow::Cow;

use crate::Error;
use crate::stage::directives::paths::{PathError, parse_absolute};

/// What a `MEDIA:` line or a `[[media:…]]` item written by the model may attach. The model's
/// text is untrusted: without this policy, `MEDIA: ~/.ssh/id_rsa` would hand the host a
/// file to upload.
///
/// - **URLs**: `https://`, and `http://` while [`MediaPolicy::allow_http`] is on, to a
///   public host only: no `localhost`, no loopback, private, link-local, shared, multicast or
///   reserved address (in any IPv4 notation, or IPv6 including mapped IPv4), no single-label
///   host, nothing under `.local`, `.localhost` or `.internal`, no cloud metadata name, no
///   credentials. A refused URL stays in the message as text.
/// - **Local paths** (`/…`, `C:\…`, `file://…`): media only when, read lexically (`.` and
///   `..` resolved on paper), they name something inside one of [`MediaPolicy::roots`]. The
///   path sent is that resolved form. `~`, relative paths (`./x`, `../x`) and UNC paths are
///   never media. A refused path is removed from the message and not sent, so no file name
///   of the host reaches the chat either.
///
/// Every refused reference is counted in [`Stats::media_refused`](crate::Stats).
///
/// The core does no I/O and cannot follow symbolic links. Configure canonical roots (with
/// symbolic links resolved), and when uploading, canonicalise the path again and check that
/// it is still inside the root: a link inside a root can point anywhere. Hosts that fetch
/// URLs should likewise check the address a name resolves to (`127.0.0.1.nip.io` is a public
/// name for a loopback address).
///
/// ```
/// use replystream::{Config, MediaPolicy};
///
/// let config = Config {
///     media: MediaPolicy { roots: vec!["/srv/bot/media/".into()], allow_http: false },
///     ..Config::default()
/// };
/// let resolved = config.validate().expect("an absolute root");
/// assert_eq!(resolved.config().media.roots, ["/srv/bot/media"]);
///
/// let relative = Config { media: MediaPolicy::with_roots(["media"]), ..Config::default() };
/// assert_eq!(
///     relative.validate().unwrap_err().to_string(),
///     "invalid configuration: media.roots[0] must be an absolute path (`/…`, or `C:\\…` \
///      on Windows) (got \"media\")"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaPolicy {
    /// Absolute directories under which a local path written by the model is media (none:
    /// then no local path is). POSIX (`/srv/media`) or Windows (`C:\media`); each must be
    /// absolute, without `..`, and not the top of the file system. Validation writes them
    /// resolved (`/srv//media/` becomes `/srv/media`, `c:/m` becomes `C:\m`).
    pub roots: Vec<String>,
    /// `http://` URLs are media too (`true`); when `false` only `https://` ones are.
    pub allow_http: bool,
}

impl Default for MediaPolicy {
    fn default() -> Self {
        MediaPolicy {
            roots: Vec::new(),
            allow_http: true,
        }
    }
}

impl MediaPolicy {
    /// The default policy with these roots.
    pub fn with_roots<I, S>(roots: I) -> MediaPolicy
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        MediaPolicy {
            roots: roots.into_iter().map(Into::into).collect(),
            ..MediaPolicy::default()
        }
    }

    /// The policy with each root checked and written in its resolved form.
    pub(crate) fn checked(mut self) -> Result<MediaPolicy, Error> {
        for (i, root) in self.roots.iter_mut().enumerate() {
            let invalid = |why: &str| {
                Error::InvalidConfig(Cow::Owned(format!("media.roots[{i}] {why} (got {root:?})")))
            };
            if root.is_empty() {
                return Err(invalid("must not be empty"));
            }
            let path = parse_absolute(root, false).map_err(|e: PathError| invalid(e.reason()))?;
            if path.components.is_empty() {
                return Err(invalid(
                    "must not be the top of the file system (every file would be media)",
                ));
            }
            let resolved = path.render();
            *root = resolved;
        }
        Ok(self)
    }
}
