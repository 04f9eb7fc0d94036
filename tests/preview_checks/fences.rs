//! An independent fence checker, written for the tests (the crate's unit tests include this
//! file too): it reads lines as CommonMark does and shares no code with the library.

/// Whether every fence opened in `text` is closed, read line by line as CommonMark does: an
/// opening line is up to 3 spaces, 3+ backticks or tildes, and an info string (without a
/// backtick for a backtick fence); a closing line is up to 3 spaces, at least as many of the
/// same char, and only spaces or tabs after.
pub(crate) fn fences_balanced(text: &str) -> bool {
    let mut open: Option<(char, usize)> = None;
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 3 {
            continue;
        }
        let rest = &line[indent..];
        let Some(c) = rest.chars().next().filter(|c| *c == '`' || *c == '~') else {
            continue;
        };
        let run = rest.chars().take_while(|x| *x == c).count();
        if run < 3 {
            continue;
        }
        let after = &rest[run..];
        match open {
            None if !(c == '`' && after.contains('`')) => open = Some((c, run)),
            Some((oc, olen))
                if oc == c && run >= olen && after.trim_matches([' ', '\t']).is_empty() =>
            {
                open = None
            }
            _ => {}
        }
    }
    open.is_none()
}
