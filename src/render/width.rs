//! Display width for aligning table columns in a monospace block: East Asian wide and
//! fullwidth characters and emoji take two columns, combining marks and joiners none. Counted
//! per grapheme cluster, so a ZWJ emoji sequence or a flag is one two-column glyph.

use unicode_segmentation::UnicodeSegmentation;

/// The number of monospace columns `text` takes.
pub(crate) fn display_width(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.graphemes(true).map(cluster_width).sum()
}

fn cluster_width(cluster: &str) -> usize {
    let mut visible = false;
    for c in cluster.chars() {
        if is_wide(c) || c == '\u{FE0F}' {
            return 2;
        }
        if !is_zero_width(c) {
            visible = true;
        }
    }
    usize::from(visible)
}

fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF | 0xA960..=0xA97F | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x1F1E6..=0x1F1FF
        | 0x1F300..=0x1F64F | 0x1F680..=0x1F6FF | 0x1F900..=0x1F9FF | 0x1FA70..=0x1FAFF
        | 0x20000..=0x3FFFD
        // Symbols shown as emoji by default (Emoji_Presentation in the BMP).
        | 0x231A..=0x231B | 0x23E9..=0x23EC | 0x23F0 | 0x23F3 | 0x25FD..=0x25FE
        | 0x2614..=0x2615 | 0x2648..=0x2653 | 0x267F | 0x2693 | 0x26A1 | 0x26AA..=0x26AB
        | 0x26BD..=0x26BE | 0x26C4..=0x26C5 | 0x26CE | 0x26D4 | 0x26EA | 0x26F2..=0x26F3
        | 0x26F5 | 0x26FA | 0x26FD | 0x2705 | 0x270A..=0x270B | 0x2728 | 0x274C | 0x274E
        | 0x2753..=0x2755 | 0x2757 | 0x2795..=0x2797 | 0x27B0 | 0x27BF | 0x2B1B..=0x2B1C
        | 0x2B50 | 0x2B55)
}

fn is_zero_width(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A | 0x064B..=0x065F
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF
        | 0x200B..=0x200F | 0x20D0..=0x20FF | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F | 0xE0100..=0xE01EF)
        || c.is_control()
}

#[cfg(test)]
mod tests {
    use super::display_width;

    #[test]
    fn widths() {
        assert_eq!(display_width("abc"), 3);
        assert_eq!(display_width("日本"), 4);
        assert_eq!(display_width("e\u{301}"), 1);
        assert_eq!(display_width("👨‍👩‍👧"), 2);
        assert_eq!(display_width("🇫🇷"), 2);
        assert_eq!(display_width("❤️"), 2);
        assert_eq!(display_width("⭐"), 2);
    }
}
