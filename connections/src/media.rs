//! What kind of file a media entry is, and where its bytes come from.

use std::path::Path;

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

/// A local file's name and bytes; an unreadable file is a permanent failure (retrying will
/// not make it appear).
pub(crate) fn read_file(path: &Path) -> Result<(String, Vec<u8>), Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::permanent(format!("media file {}: {e}", path.display())))?;
    let name = path
        .file_name()
        .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
    Ok((name, bytes))
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
