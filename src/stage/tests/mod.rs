//! Tests of the text stages wired together as the engine wires them (tags → directives →
//! tokens), below the engine: over the sample replies, and for allocations.

mod alloc;
mod corpus;
mod long;

use crate::stage::directives::{DirectiveEvent, DirectiveOutput, DirectiveParser};
use crate::stage::tags::TagFilter;
use crate::stage::tokens::{TokenConfig, TokenGate};

/// Byte offsets picked by `picks` in `text`, on char boundaries, sorted: where a stage's
/// property tests cut a text into deltas.
pub(crate) fn cuts_in(text: &str, picks: &[proptest::sample::Index]) -> Vec<usize> {
    let mut cuts: Vec<usize> = picks
        .iter()
        .map(|ix| ix.index(text.len() + 1))
        .filter(|&c| text.is_char_boundary(c))
        .collect();
    cuts.sort_unstable();
    cuts
}

/// What the text stages wired together produced for one message.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Wired {
    /// The answer text, merged across pushes.
    pub(crate) answer: String,
    /// The hidden reasoning.
    pub(crate) reasoning: String,
    /// Directive events other than text, each with the answer length at which it came.
    pub(crate) events: Vec<(usize, DirectiveEvent)>,
}

impl Wired {
    /// The media items in order, each with the answer length at which it came.
    pub(crate) fn media(&self) -> Vec<(usize, &str)> {
        self.events
            .iter()
            .filter_map(|(at, e)| match e {
                DirectiveEvent::Media(m) => Some((*at, m.as_str())),
                _ => None,
            })
            .collect()
    }
}

/// Tags → directives → tokens over one message pushed in `pieces`, as the engine wires them:
/// the tag filter's answer goes to the directive parser, its text to the token gate, and
/// the token gate lets go of what it holds before each media item.
pub(crate) fn wired(pieces: &[&str]) -> Wired {
    let mut tags = TagFilter::new(false);
    let mut directives = DirectiveParser::new();
    let mut tokens = TokenGate::new(&TokenConfig::default());
    let mut result = Wired::default();
    let (mut answer, mut directed) = (String::new(), DirectiveOutput::new());
    let mut feed = |answer: &str, directed: &mut DirectiveOutput, result: &mut Wired, end: bool| {
        directives.push(answer, directed);
        if end {
            directives.finish(directed);
        }
        for event in &directed.events {
            match event {
                DirectiveEvent::Text(r) => {
                    tokens.push(&directed.text[r.clone()], &mut result.answer)
                }
                other => {
                    if matches!(other, DirectiveEvent::Media(_)) {
                        tokens.flush(&mut result.answer);
                    }
                    result.events.push((result.answer.len(), other.clone()));
                }
            }
        }
        if end {
            tokens.finish(&mut result.answer);
        }
        directed.clear();
    };
    for p in pieces {
        tags.push(p, &mut answer, &mut result.reasoning);
        feed(&answer, &mut directed, &mut result, false);
        answer.clear();
    }
    tags.finish(&mut answer, &mut result.reasoning);
    feed(&answer, &mut directed, &mut result, true);
    result
}

/// The one search for the bytes the tag filter and the directive parser act on finds what
/// a byte-by-byte reading finds, in short deltas (a plain loop) and long ones (`memchr`),
/// wherever the byte sits.
#[test]
fn stage_syntax_finds_tags_brackets_and_line_breaks() {
    use crate::stage::{LINE_BREAK, TAG_OR_BRACKET, stage_syntax};
    let naive = |s: &[u8]| {
        let mut found = 0;
        if s.iter().any(|&b| b == b'<' || b == b'[') {
            found |= TAG_OR_BRACKET;
        }
        if s.contains(&b'\n') {
            found |= LINE_BREAK;
        }
        found
    };
    for len in [0, 1, 4, 15, 16, 17, 40] {
        let plain = "é]>M \t\r*".repeat(len).into_bytes();
        let plain = &plain[..len];
        assert_eq!(stage_syntax(plain), 0, "{plain:?}");
        for at in 0..len {
            for (b, class) in [
                (b'<', TAG_OR_BRACKET),
                (b'[', TAG_OR_BRACKET),
                (b'\n', LINE_BREAK),
            ] {
                let mut s = plain.to_vec();
                s[at] = b;
                assert_eq!(stage_syntax(&s), class, "{s:?}");
                assert_eq!(stage_syntax(&s), naive(&s));
                let other = if b == b'\n' { b'<' } else { b'\n' };
                s[len - 1 - at] = other;
                assert_eq!(stage_syntax(&s), naive(&s), "{s:?}");
            }
        }
    }
}
