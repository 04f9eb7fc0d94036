//! What kind of file a media entry is, and where its bytes come from.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::Failure;

/// How a platform should present a media entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MediaKind {
    Photo,
    Audio,
    Video,
    Document,
}

/// A media entry of a payload: a URL the platform fetches itself, or a local file to upload.
pub(crate) enum Source<'a> {
    Url(&'a str),
    File(&'a Path),
}

pub(crate) fn source(entry: &str) -> Source<'_> {
    let lower = entry.get(..8).unwrap_or(entry).to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        Source::Url(entry)
    } else {
        Source::File(Path::new(entry.strip_prefix("file://").unwrap_or(entry)))
    }
}

/// The kind, from the file extension (of the URL path without its query).
pub(crate) fn kind(entry: &str) -> MediaKind {
    let path = entry.split(['?', '#']).next().unwrap_or(entry);
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "jpg" | "jpeg" | "png" | "webp" => MediaKind::Photo,
        "ogg" | "oga" | "opus" | "mp3" | "m4a" | "wav" | "flac" | "aac" => MediaKind::Audio,
        "mp4" | "mov" | "webm" | "mkv" => MediaKind::Video,
        _ => MediaKind::Document,
    }
}

/// The MIME type for an upload, from the extension.
pub(crate) fn content_type(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("png") => "image/png",
        Some("webp") => "image/webp",
        Some("gif") => "image/gif",
        Some("ogg" | "oga" | "opus") => "audio/ogg",
        Some("mp3") => "audio/mpeg",
        Some("m4a") => "audio/mp4",
        Some("wav") => "audio/wav",
        Some("mp4") => "video/mp4",
        Some("pdf") => "application/pdf",
        Some("txt" | "md") => "text/plain",
        _ => "application/octet-stream",
    }
}

/// Why a file whose real location is outside the roots is refused.
const OUTSIDE: &str = "resolves outside every media root (a symbolic link leaves the root)";

/// The path of an open file, from `/proc/self/fd` (Linux only).
#[cfg(target_os = "linux")]
fn opened_path(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(not(target_os = "linux"))]
fn opened_path(_: &std::fs::File) -> Option<PathBuf> {
    None
}

/// The directories local files may be uploaded from, checked on the file system at upload
/// time.
///
/// The engine checks a model's local media path *lexically* against
/// [`MediaPolicy::roots`](replystream::MediaPolicy) (the core does no I/O), so a symbolic
/// link inside a root (`/srv/media/x.png -> /etc/passwd`), a linked directory, or a `..`
/// taken through a link still passes there. The connections check again before reading a
/// byte: every root and the file are canonicalised (links followed), and the file is
/// uploaded only when its real location is a regular file inside a root's real location.
/// Otherwise that send fails for good (retrying will not move the file), with a reason that
/// names the path as the model wrote it. With no roots (the default) no local file is
/// uploaded at all, as the engine then accepts none.
///
/// Give the same roots as the engine's `MediaPolicy::roots`. A root that does not exist
/// (or cannot be read) admits nothing.
///
/// On Linux the file, once opened, is checked again where the kernel says it is, so a link
/// swapped in between the check and the open is caught too; elsewhere that window stays.
/// Either way, keep the media roots writable only by the bot's host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MediaRoots {
    roots: Vec<PathBuf>,
}

impl MediaRoots {
    /// These directories (absolute paths; canonicalised at each upload, so a root that is
    /// itself a link, or that appears later, works).
    pub fn new<I, P>(roots: I) -> MediaRoots
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        MediaRoots {
            roots: roots.into_iter().map(Into::into).collect(),
        }
    }

    /// No directory: every local file is refused.
    pub fn none() -> MediaRoots {
        MediaRoots::default()
    }

    /// The directories, as given.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Where `path` really is, when that is a regular file inside a root's real location;
    /// otherwise the permanent failure that says why it is not uploaded.
    pub fn resolve(&self, path: &Path) -> Result<PathBuf, Failure> {
        let refused = |why: &str| {
            Failure::permanent(format!(
                "media file {}: {why}; not uploaded",
                path.display()
            ))
        };
        if self.roots.is_empty() {
            return Err(refused("no media roots are configured for uploads"));
        }
        let real = std::fs::canonicalize(path).map_err(|e| refused(&e.to_string()))?;
        if !self.holds(&real) {
            return Err(refused(OUTSIDE));
        }
        if !std::fs::metadata(&real).is_ok_and(|m| m.is_file()) {
            return Err(refused("is not a regular file"));
        }
        Ok(real)
    }

    /// Whether the canonical path `real` is inside a root's real location.
    fn holds(&self, real: &Path) -> bool {
        self.roots
            .iter()
            .filter_map(|root| std::fs::canonicalize(root).ok())
            .any(|root| real.starts_with(&root))
    }

    /// Checks every local file of `media` (URLs pass), so a send refuses a bad file before
    /// any part of it goes out.
    pub(crate) fn check_all(&self, media: &[String]) -> Result<(), Failure> {
        for entry in media {
            if let Source::File(path) = source(entry) {
                self.resolve(path)?;
            }
        }
        Ok(())
    }

    /// A local file's name (as the model wrote it) and bytes, read from its real location
    /// once [`MediaRoots::resolve`] admitted it. An unreadable file is a permanent failure
    /// (retrying will not make it appear).
    pub(crate) fn read(&self, path: &Path) -> Result<(String, Vec<u8>), Failure> {
        let real = self.resolve(path)?;
        let unreadable =
            |e: std::io::Error| Failure::permanent(format!("media file {}: {e}", path.display()));
        let mut file = std::fs::File::open(&real).map_err(unreadable)?;
        // Where the opened file really is, as the kernel says: a link swapped in between
        // the check above and the open is caught here (Linux; elsewhere the check stands).
        if let Some(opened) = opened_path(&file)
            && !self.holds(&opened)
        {
            return Err(Failure::permanent(format!(
                "media file {}: {OUTSIDE}; not uploaded",
                path.display()
            )));
        }
        // The opened file itself must be a regular file (a FIFO would block the worker).
        if !file.metadata().map_err(unreadable)?.is_file() {
            return Err(Failure::permanent(format!(
                "media file {}: is not a regular file; not uploaded",
                path.display()
            )));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(unreadable)?;
        let name = path
            .file_name()
            .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
        Ok((name, bytes))
    }
}

/// `text` with the URL entries of `media` on lines of their own after it (platforms that
/// take no file by URL show a link, and preview it).
pub(crate) fn text_with_links(text: &str, media: &[String]) -> String {
    let mut out = text.to_owned();
    for entry in media {
        if let Source::Url(url) = source(entry) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(url);
        }
    }
    out
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The kernel names the file an open went to, not the link it went through: the check
    /// made after the open sees the real file.
    #[test]
    fn an_open_file_is_named_by_its_real_location() {
        let base = std::env::temp_dir().join(format!("rs-opened-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let target = base.join("target.bin");
        std::fs::write(&target, b"x").unwrap();
        let link = base.join("link.bin");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let file = std::fs::File::open(&link).unwrap();
        let real = std::fs::canonicalize(&target).unwrap();
        assert_eq!(opened_path(&file), Some(real.clone()));
        let roots = MediaRoots::new([real.parent().unwrap().join("elsewhere")]);
        assert!(!roots.holds(&real));
        assert!(MediaRoots::new([real.parent().unwrap()]).holds(&real));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
