//! Argument conversion: C text views to `&str`, media arrays to URL lists, and the carry of
//! a UTF-8 sequence cut at the end of a streamed push.

use std::ffi::c_char;

use crate::result::replystream_result::{self, *};
use crate::types::replystream_str;

/// Why an argument was refused: the code to return and the detail for the last error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ArgError {
    pub(crate) code: replystream_result,
    pub(crate) detail: String,
}

impl ArgError {
    pub(crate) fn new(code: replystream_result, detail: impl Into<String>) -> ArgError {
        ArgError {
            code,
            detail: detail.into(),
        }
    }
}

/// Borrows `len` bytes at `ptr`: NULL is `None` (allowed with `len` 0 only). Errors name the
/// argument `what`.
///
/// # Safety
/// `ptr` is NULL or points to `len` bytes readable for `'a`.
pub(crate) unsafe fn bytes_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a [u8]>, ArgError> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(None)
        } else {
            Err(ArgError::new(
                REPLYSTREAM_NULL_POINTER,
                format!("{what} is NULL but its length is {len}"),
            ))
        };
    }
    if len > isize::MAX as usize {
        return Err(ArgError::new(
            REPLYSTREAM_INVALID_ARGUMENT,
            format!("{what} length {len} is larger than any object"),
        ));
    }
    // SAFETY: `ptr` is non-NULL and points to `len <= isize::MAX` readable bytes (caller
    // contract); the bytes are only read.
    Ok(Some(unsafe {
        std::slice::from_raw_parts(ptr.cast::<u8>(), len)
    }))
}

/// Reads a whole-text argument: NULL is `None` (with `len` 0), else UTF-8 bytes borrowed for
/// `'a`. Errors name the argument `what`.
///
/// # Safety
/// `ptr` is NULL or points to `len` bytes readable for `'a`.
pub(crate) unsafe fn str_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>, ArgError> {
    // SAFETY: forwarded from the caller.
    let Some(bytes) = (unsafe { bytes_arg(ptr, len, what) })? else {
        return Ok(None);
    };
    std::str::from_utf8(bytes).map(Some).map_err(|e| {
        ArgError::new(
            REPLYSTREAM_INVALID_UTF8,
            format!(
                "{what} is not valid UTF-8 (bad byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// Reads an array of `count` media URLs. NULL is the empty list (with `count` 0); every URL
/// must be non-empty UTF-8.
///
/// # Safety
/// `urls` is NULL or points to `count` readable `replystream_str`s, each NULL or pointing to
/// its length of readable bytes.
pub(crate) unsafe fn media_arg(
    urls: *const replystream_str,
    count: usize,
) -> Result<Vec<String>, ArgError> {
    if urls.is_null() {
        return if count == 0 {
            Ok(Vec::new())
        } else {
            Err(ArgError::new(
                REPLYSTREAM_NULL_POINTER,
                format!("media is NULL but media_count is {count}"),
            ))
        };
    }
    if count > isize::MAX as usize / size_of::<replystream_str>() {
        return Err(ArgError::new(
            REPLYSTREAM_INVALID_ARGUMENT,
            format!("media_count {count} is larger than any array"),
        ));
    }
    // SAFETY: non-NULL, `count` readable elements (caller contract), size checked above.
    let views = unsafe { std::slice::from_raw_parts(urls, count) };
    let mut out = Vec::with_capacity(count);
    for (i, view) in views.iter().enumerate() {
        let what = format!("media[{i}]");
        // SAFETY: each view points to its length of readable bytes (caller contract).
        match unsafe { str_arg(view.ptr, view.len, &what) }? {
            Some(url) if !url.is_empty() => out.push(url.to_owned()),
            _ => {
                return Err(ArgError::new(
                    REPLYSTREAM_INVALID_ARGUMENT,
                    format!("{what} is empty; a media URL or path is needed"),
                ));
            }
        }
    }
    Ok(out)
}

/// The first bytes of a UTF-8 sequence that a streamed push (a text or thinking delta) cut
/// off at its end, kept until the next push of the same stream completes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Utf8Carry {
    bytes: [u8; 3],
    len: u8,
}

impl Utf8Carry {
    /// The kept bytes (at most 3).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn of(tail: &[u8]) -> Utf8Carry {
        let mut carry = Utf8Carry::default();
        carry.bytes[..tail.len()].copy_from_slice(tail);
        carry.len = tail.len() as u8;
        carry
    }
}

/// The text of a streamed push and the carry to keep after it.
pub(crate) struct Streamed<'a> {
    /// The complete characters: the old carry's, then the push's.
    pub(crate) text: &'a str,
    /// An incomplete sequence at the end, to complete with the next push.
    pub(crate) carry: Utf8Carry,
}

/// Why a streamed push was refused.
#[derive(Debug)]
pub(crate) struct StreamedError {
    pub(crate) error: ArgError,
    /// The old carry is what is invalid (the push did not continue it): drop it, so that the
    /// stream is not stuck.
    pub(crate) drop_carry: bool,
}

/// Joins `carry` and `bytes` (in `scratch` when there is a carry) and splits off an
/// incomplete sequence at the end. Invalid bytes anywhere else are an error; nothing is
/// consumed then.
pub(crate) fn streamed<'a>(
    carry: Utf8Carry,
    bytes: &'a [u8],
    scratch: &'a mut Vec<u8>,
    what: &str,
) -> Result<Streamed<'a>, StreamedError> {
    let joined: &'a [u8] = if carry.is_empty() {
        bytes
    } else {
        scratch.clear();
        scratch.extend_from_slice(carry.as_bytes());
        scratch.extend_from_slice(bytes);
        scratch
    };
    let (valid, tail) = match std::str::from_utf8(joined) {
        Ok(text) => {
            return Ok(Streamed {
                text,
                carry: Utf8Carry::default(),
            });
        }
        // An incomplete sequence at the very end: keep it for the next push.
        Err(e) if e.error_len().is_none() => joined.split_at(e.valid_up_to()),
        Err(e) => {
            let carried = usize::from(carry.len);
            let drop_carry = carried > 0 && e.valid_up_to() == 0;
            let detail = if drop_carry {
                format!(
                    "{what} does not continue the UTF-8 sequence that the previous {what} \
                     ended with ({carried} byte(s), now dropped)"
                )
            } else {
                format!(
                    "{what} is not valid UTF-8 (bad byte at offset {})",
                    e.valid_up_to() - carried
                )
            };
            return Err(StreamedError {
                error: ArgError::new(REPLYSTREAM_INVALID_UTF8, detail),
                drop_carry,
            });
        }
    };
    // `valid` is exactly the prefix `from_utf8` accepted; the tail is 1 to 3 bytes.
    let text = std::str::from_utf8(valid).map_err(|_| StreamedError {
        error: ArgError::new(REPLYSTREAM_INVALID_UTF8, format!("{what}: bad UTF-8")),
        drop_carry: false,
    })?;
    Ok(Streamed {
        text,
        carry: Utf8Carry::of(tail),
    })
}
