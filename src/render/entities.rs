//! Telegram message entities: the styled text as is, each span as an entity with its
//! offset and length in UTF-16 code units (what Telegram counts), the URL of a text link
//! and the language of a code block.

use super::styled::{SpanKind, Styled};
use super::{Entity, EntityKind};

/// The entities of `styled`, in the order Telegram lists them (by offset, outer first).
pub(crate) fn entities(styled: &Styled) -> Vec<Entity> {
    // UTF-16 offset of every span boundary, found in one pass over the text.
    let mut bounds: Vec<usize> = styled.spans.iter().flat_map(|s| [s.start, s.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut utf16 = Vec::with_capacity(bounds.len());
    let (mut byte, mut units) = (0, 0);
    for &b in &bounds {
        units += styled.text[byte..b].encode_utf16().count();
        byte = b;
        utf16.push(units);
    }
    let at = |b: usize| utf16[bounds.binary_search(&b).unwrap_or(0)];
    styled
        .spans
        .iter()
        .map(|s| {
            let (kind, url, language) = match &s.kind {
                SpanKind::Bold => (EntityKind::Bold, None, None),
                SpanKind::Italic => (EntityKind::Italic, None, None),
                SpanKind::Strike => (EntityKind::Strikethrough, None, None),
                SpanKind::Code => (EntityKind::Code, None, None),
                SpanKind::Pre { language } => (EntityKind::Pre, None, language.clone()),
                SpanKind::Link { url } => (EntityKind::TextLink, Some(url.clone()), None),
                SpanKind::Quote { expandable: false } => (EntityKind::Blockquote, None, None),
                SpanKind::Quote { expandable: true } => {
                    (EntityKind::ExpandableBlockquote, None, None)
                }
            };
            let offset = at(s.start);
            Entity {
                kind,
                offset,
                length: at(s.end) - offset,
                url,
                language,
            }
        })
        .collect()
}
