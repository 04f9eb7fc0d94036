//! Unit tests of the Markdown scanner and its indented-code reading.

use super::containers::ContainerPrefix;

use super::indented::*;
use super::scanner::*;
use super::spans::*;
#[test]
fn indented_lines_are_code_only_where_a_code_block_may_start() {
    let text =
        "Para\n    lazy\n\n    code\n      more\n# Head\n    code2\n```\n    in\n```\n    code3";
    let at = |line: &str| text.find(&format!("\n{line}")).unwrap() + 1;
    assert!(!is_indented_code_line(text, at("    lazy")));
    assert!(is_indented_code_line(text, at("    code\n")));
    assert!(is_indented_code_line(text, at("      more")));
    assert!(is_indented_code_line(text, at("    code2")));
    assert!(is_indented_code_line(text, at("    code3")));
    assert!(!is_indented_code_line(text, 2), "not a line start");
    // A long run of indented lines is taken for code without walking it all.
    let long = format!("Para\n{}", "    x\n".repeat(1000));
    assert!(is_indented_code_line(&long, long.len() - 6));
}

#[test]
fn an_item_paragraph_after_its_code_is_no_indented_code() {
    let text = "1. Install:\n\n    ```sh\n    run\n    ```\n\n    If it fails, retry.\n\n   - nested\n\n       deep para\n\nTop.\n\n    code\n";
    let at = |line: &str| text.find(&format!("\n{line}")).unwrap() + 1;
    // Under `1. ` (content column 3) a line at 4 spaces is the item's paragraph.
    assert!(!is_indented_code_line(text, at("    If it fails")));
    // Under `   - ` (content column 5) a line at 7 spaces is too.
    assert!(!is_indented_code_line(text, at("       deep para")));
    // The item's fence line keeps its indentation (shown bare it would run on).
    assert!(is_indented_code_line(text, at("    ```sh")));
    // After the list, 4 spaces after a blank line are code again.
    assert!(is_indented_code_line(text, at("    code")));
}

fn scan_all(text: &str) -> MarkdownScanner {
    let mut s = MarkdownScanner::new();
    s.finish(text);
    s
}

fn scan_bytewise(text: &str) -> MarkdownScanner {
    let mut s = MarkdownScanner::new();
    let mut end = 0;
    while end < text.len() {
        end += 1;
        while !text.is_char_boundary(end) {
            end += 1;
        }
        s.scan(&text[..end]);
    }
    s.finish(text);
    s
}

/// The fences of `text`, read whole and byte by byte (the same either way), as
/// (opening line, closing marker end or text end, prefix shown).
fn container_fences(text: &str) -> Vec<(String, usize, String)> {
    let whole = scan_all(text);
    let bytewise = scan_bytewise(text);
    assert_eq!(
        whole.fences(),
        bytewise.fences(),
        "split-invariant on {text:?}"
    );
    whole
        .fences()
        .iter()
        .map(|f| {
            (
                text[f.start..f.open_end].to_owned(),
                f.end.unwrap_or(text.len()),
                f.marker.prefix.as_str().to_owned(),
            )
        })
        .collect()
}

#[test]
fn fences_in_list_items_are_fences() {
    let text = "- item\n    ```sh\n    echo\n    ```\n- next\n";
    let f = container_fences(text);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].0, "    ```sh");
    assert_eq!(f[0].1, text.find("    ```\n-").unwrap() + 7);
    assert_eq!(f[0].2, "  ");
    // Under `1. ` a fence may stand at 6 spaces; at 7 it is indented code.
    let six = "1. step\n\n      ```\n      x\n      ```\n";
    assert_eq!(container_fences(six).len(), 1);
    let seven = "1. step\n\n       ```\n       x\n";
    assert!(container_fences(seven).is_empty());
    // Two levels deep, CRLF.
    let deep = "1. a\r\n   - b\r\n\r\n     ```\r\n     x\r\n     ```\r\n";
    let f = container_fences(deep);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].2, "     ");
    assert!(deep[..f[0].1].ends_with("     ```"));
}

#[test]
fn fences_in_quotes_end_with_the_quote() {
    let text = "> say\n> ```\n> code\nplain\n```\n";
    let f = container_fences(text);
    // The quote's fence ends where a line leaves the quote; the last ``` opens a new one.
    assert_eq!(f.len(), 2);
    assert_eq!(f[0].0, "> ```");
    assert_eq!(f[0].1, text.find("\nplain").unwrap());
    assert_eq!(f[0].2, "> ");
    assert_eq!(f[1].2, "");
    // A lazy paragraph line keeps the quote; the fence after it is still in the quote.
    let lazy = "> para\nlazy\n> ```\n> x\n> ```\nafter";
    let f = container_fences(lazy);
    assert_eq!(f.len(), 1);
    assert!(lazy[..f[0].1].ends_with("> ```"));
}

#[test]
fn a_shallow_fence_in_a_list_item_keeps_the_top_level_reading() {
    // At 3 spaces or less (no quote) a fence reads the same at the top level, where a
    // message that lost the item shows it: it ends at its closing line, not with the
    // item.
    let text = "- a\n  ```\n  code\nout\n```\n";
    let f = container_fences(text);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].2, "");
    assert_eq!(f[0].1, text.len() - 1);
}

#[test]
fn a_list_item_ending_inside_its_code_ends_the_fence() {
    let text = "1. a\n    ```\n    code\nout\n";
    let s = scan_all(text);
    let f = s.fences()[0];
    assert_eq!(f.end, Some(text.find("\nout").unwrap()));
    // A cut between the code and `out` is outside the fence.
    assert!(s.fence_at(text.find("out").unwrap()).is_none());
    assert!(s.fence_at(text.find("code").unwrap() + 2).is_some());
}

#[test]
fn synthetic_fence_lines_carry_the_container_prefix() {
    let text = "> 1. x\n>    ```rust\n>    a\n";
    let s = scan_all(text);
    let m = s.fences()[0].marker;
    let mut close = String::new();
    m.push_close(&mut close);
    assert_eq!(close, ">    ```");
    assert_eq!(m.close_len(), close.len());
    let mut open = String::new();
    m.push_open_line("> 1. ```rust", &mut open);
    assert_eq!(open, ">    ```rust");
}

#[test]
fn parses_opening_lines() {
    assert_eq!(
        FenceMarker::parse_open("```rust"),
        Some(FenceMarker {
            ch: b'`',
            len: 3,
            indent: 0,
            prefix: ContainerPrefix::NONE,
        })
    );
    assert_eq!(
        FenceMarker::parse_open("   ~~~~ info `x`"),
        Some(FenceMarker {
            ch: b'~',
            len: 4,
            indent: 3,
            prefix: ContainerPrefix::NONE,
        })
    );
    assert_eq!(
        FenceMarker::parse_open("    ```"),
        None,
        "4 spaces is indented code"
    );
    assert_eq!(FenceMarker::parse_open("``"), None);
    assert_eq!(
        FenceMarker::parse_open("``` a`b"),
        None,
        "backtick in info string"
    );
    assert_eq!(FenceMarker::parse_open("x```"), None);
}

#[test]
fn closing_rules() {
    let m = FenceMarker::parse_open("````").unwrap();
    assert!(
        !m.is_closed_by("```"),
        "four-backtick fence is not closed by three"
    );
    assert!(m.is_closed_by("````"));
    assert!(m.is_closed_by("  `````  "));
    assert!(
        !m.is_closed_by("```` x"),
        "text after the marker is content"
    );
    assert!(!m.is_closed_by("~~~~"));
    assert!(m.is_closed_by("````\r"));
}

#[test]
fn finds_fences_and_cut_safety() {
    let text = "Intro\n\n~~~sh\nline1\n\nline2\n~~~\n\nOutro";
    let s = scan_all(text);
    assert_eq!(s.fences().len(), 1);
    let f = s.fences()[0];
    assert_eq!(&text[f.start..f.open_end], "~~~sh");
    assert_eq!(&text[f.start..f.end.unwrap()], "~~~sh\nline1\n\nline2\n~~~");
    assert_eq!(&text[f.close_start..f.end.unwrap()], "~~~");
    assert!(s.is_safe_cut(f.start));
    assert!(!s.is_safe_cut(f.start + 1));
    assert!(!s.is_safe_cut(text.find("\n\nline2").unwrap()));
    assert!(s.is_safe_cut(f.end.unwrap()));
    assert!(s.open_fence().is_none());
}

#[test]
fn unclosed_fence_stays_open() {
    let text = "a\n```py\nprint(1)\n``` not a closer\nx";
    let s = scan_all(text);
    let f = s.open_fence().expect("open");
    assert_eq!(&text[f.start..f.open_end], "```py");
    assert!(!s.is_safe_cut(text.len()));
}

#[test]
fn inline_code_spans() {
    let text = "use `a b` and ``x ` y`` then `open\n\nnext `c`";
    let s = scan_all(text);
    let spans: Vec<&str> = s
        .code_spans()
        .iter()
        .map(|c| &text[c.start..c.end.unwrap()])
        .collect();
    assert_eq!(spans, ["`a b`", "``x ` y``", "`c`"]);
    let inside = text.find("a b").unwrap() + 1;
    assert!(!s.is_safe_cut(inside));
    assert!(s.is_safe_cut(text.find(" and").unwrap()));
    assert!(
        s.is_safe_cut(text.find("open").unwrap() + 2),
        "unmatched run is literal"
    );
}

#[test]
fn bytewise_scan_equals_whole_scan() {
    let samples = [
        "Intro\n\n~~~sh\nline1\nline2\n~~~\n\nOutro",
        "````md\n```\ninner\n```\n````\nafter `x` ``y``",
        "  ```\n  code\n  ```\ntext `a\nb` c\n\n`d",
        "a `` b\n```\n`x`\n```\n",
        "```\nopen forever `x` \n",
    ];
    for text in samples {
        let a = scan_all(text);
        let b = scan_bytewise(text);
        assert_eq!(a.fences(), b.fences(), "{text:?}");
        assert_eq!(a.code_spans(), b.code_spans(), "{text:?}");
    }
}

#[test]
fn drain_rebases_and_marks_continued() {
    let text = "p\n```rs\nlet a = 1;\nlet b = 2;\n";
    let mut s = MarkdownScanner::new();
    s.scan(text);
    let cut = text.find("let b").unwrap();
    s.drain(cut);
    let rest = &text[cut..];
    let f = s.open_fence().unwrap();
    assert!(f.continued);
    assert_eq!(f.start, 0);
    assert!(!s.is_safe_cut(0) || f.contains_cut(0));
    s.scan(&format!("{rest}```\nok"));
    assert!(s.open_fence().is_none());
}

#[test]
fn fence_stretch_stops_before_possible_closers() {
    let mut s = MarkdownScanner::new();
    assert_eq!(s.fence_stretch("text"), None, "no fence");
    let text = "````rs\na\n    ````\n~~~\nb\n ````x\nc";
    s.scan(&text[..7]);
    // Indented 4 spaces or starting with another char: no closer. The next line that
    // may close is " ````x" (a closer would start the same way).
    let stop = text.find(" ````x").unwrap();
    assert_eq!(s.fence_stretch(text), Some(stop));
    s.scan(&text[..9]);
    assert_eq!(s.fence_stretch(text), Some(stop), "mid-line");
    s.scan(&text[..stop + 2]);
    assert_eq!(s.fence_stretch(text), Some(stop + 2), "empty on that line");
    let mut s = MarkdownScanner::new();
    s.scan("~~~\ncode\n  ");
    assert_eq!(
        s.fence_stretch("~~~\ncode\n  "),
        Some(11),
        "an unfinished indent may lead to a closer"
    );
    assert_eq!(s.fence_stretch("~~~\ncode\n  x"), Some(12));
}

/// The stretch [`MarkdownScanner::fence_stretch`] finds (jumping between the marker
/// chars) ends where a reading line by line says: at the first line, the current one
/// included, whose first byte after at most 3 spaces is the marker char or has not
/// arrived; else at the end of the text. Random fences of lines that start every way,
/// short and long (read line by line, or by jumping between the marker chars: see
/// [`SHORT_FENCE_REST`]), scanned to every position and asked about every longer text.
#[test]
fn fence_stretch_ends_where_a_line_by_line_reading_does() {
    const LINES: &[&str] = &[
        "code", "  `x`", "   ```", "    ```", "```", "``", " ~~~", "a ``` b", "", "  ", "   ",
        "\t```", "   `", "x`", "````", " ` `",
    ];
    for seed in 0..150 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let marker = if rng.bool() { "```" } else { "~~~" };
        let mut text = format!("{marker}js\n");
        let lines = match seed % 2 {
            0 => rng.usize(1..10),
            _ => rng.usize(30..60),
        };
        for _ in 0..lines {
            let line = LINES[rng.usize(..LINES.len())];
            text.push_str(&line.replace('`', &marker[..1]));
            text.push('\n');
        }
        for scanned in marker.len() + 3..=text.len() {
            let mut s = MarkdownScanner::new();
            s.scan(&text[..scanned]);
            // (A line may have closed the fence and another opened one.)
            let Some(ch) = s.open_fence().map(|f| f.marker.ch) else {
                continue;
            };
            for end in scanned..=text.len() {
                let bytes = &text.as_bytes()[..end];
                // Line by line, from the current line's start.
                let mut line = s.line_start();
                let expected = loop {
                    let indent = bytes[line..].iter().take_while(|&&b| b == b' ').count();
                    let first = bytes.get(line + indent);
                    if indent < 4 && first.is_none_or(|&b| b == ch) {
                        break line.max(scanned);
                    }
                    let from = line.max(scanned);
                    match bytes[from..].iter().position(|&b| b == b'\n') {
                        Some(i) => line = from + i + 1,
                        None => break end,
                    }
                };
                assert_eq!(
                    s.fence_stretch(&text[..end]),
                    Some(expected),
                    "{text:?} scanned {scanned} end {end}"
                );
            }
        }
    }
}

#[test]
fn undecided_fence_line_is_not_cut() {
    let mut s = MarkdownScanner::new();
    let text = "hello\n``";
    s.scan(text);
    assert!(s.in_undecided_fence_line(text.len()));
    assert!(!s.is_safe_cut(text.len()));
    assert!(s.is_safe_cut(5));
}

#[test]
fn a_closing_fence_ends_at_its_marker_run() {
    // A cut right after the marker is outside the fence, whatever ends the line.
    for text in [
        "```\ncode\n```\r\nafter",
        "```\ncode\n```  \nafter",
        "```\ncode\n```",
    ] {
        let s = scan_all(text);
        let f = s.fences()[0];
        assert_eq!(f.end, Some(12), "{text:?}");
        assert!(s.is_safe_cut(12), "{text:?}");
        assert!(!s.is_safe_cut(11), "{text:?}");
    }
}

#[test]
fn inline_code_stops_at_block_boundaries() {
    // A stray backtick is literal once its block ends: at a list item, a heading's end,
    // a block quote, a fence line; the spans after it pair up as written.
    let cases = [
        "- a stray `backtick here.\n- item `one` and `two`",
        "# Title with a ` stray\nText `one` and `two`",
        "A stray ` here\n> quote `one` and `two`",
        "A stray ` here\n1. item `one` and `two`",
        "A stray ` here\n12) item `one` and `two`",
    ];
    for text in cases {
        for s in [scan_all(text), scan_bytewise(text)] {
            let spans: Vec<&str> = s
                .code_spans()
                .iter()
                .map(|c| &text[c.start..c.end.unwrap()])
                .collect();
            assert_eq!(spans, ["`one`", "`two`"], "{text:?}");
        }
    }
    // A paragraph's continuation line (even one that looks like a number) is not a
    // block start: the span goes on.
    let text = "A span ` starts\n2024 was `x";
    let s = scan_all(text);
    let spans: Vec<&str> = s
        .code_spans()
        .iter()
        .filter_map(|c| c.end.map(|e| &text[c.start..e]))
        .collect();
    assert_eq!(spans, ["` starts\n2024 was `"]);
}

#[test]
fn indented_code_blocks() {
    let text = "Para\n    not code\n\n    code 1\n\n    code 2\n  \nAfter\n\n\tcode 3\n";
    for s in [scan_all(text), scan_bytewise(text)] {
        let blocks: Vec<&str> = s
            .indented_blocks()
            .iter()
            .map(|c| &text[c.start..c.end.unwrap()])
            .collect();
        assert_eq!(blocks, ["    code 1\n\n    code 2", "\tcode 3"]);
        let blank = text.find("\n\n    code 2").unwrap();
        assert!(!s.is_safe_cut(blank), "a blank line inside indented code");
        assert!(s.is_safe_cut(text.find("\n  \nAfter").unwrap()));
        assert!(s.is_safe_cut(text.find(" not").unwrap()));
    }
}

#[test]
fn content_skips_fence_lines_and_whitespace() {
    let text = "  \n```rust\n```\n\n~~~\n  x\n~~~  \n";
    let s = scan_all(text);
    assert_eq!(
        s.first_content(text, 0, text.len()),
        Ok(text.find('x').unwrap())
    );
    assert_eq!(s.last_content(text, 0, text.len()), text.find('x'));
    let x = text.find('x').unwrap();
    assert_eq!(s.first_content(text, x + 1, text.len()), Err(text.len()));
    assert_eq!(s.last_content(text, 0, x), None);
    // While a line may still be a fence line, it holds no content yet.
    let mut s = MarkdownScanner::new();
    s.scan("ab\n``");
    assert_eq!(s.first_content("ab\n``", 2, 5), Err(3));
    s.scan("ab\n``x");
    assert_eq!(s.first_content("ab\n``x", 2, 6), Ok(3));
}

#[test]
fn tables_are_read_as_gfm_reads_them() {
    let text = "Intro\n\n| A | B |\n|---|:-:|\n| 1 | 2 |\nlazy row\n\nAfter | x\n|---|\n\n\
                    Para\n| C | D |\n| - | - |\n| 3 | 4 |\n# Head\n";
    for s in [scan_all(text), scan_bytewise(text)] {
        let tables: Vec<(&str, &str)> = s
            .tables
            .spans()
            .iter()
            .map(|t| (&text[t.start..t.delim_end], &text[t.start..t.end.unwrap()]))
            .collect();
        assert_eq!(
            tables,
            [
                (
                    "| A | B |\n|---|:-:|",
                    "| A | B |\n|---|:-:|\n| 1 | 2 |\nlazy row"
                ),
                ("| C | D |\n| - | - |", "| C | D |\n| - | - |\n| 3 | 4 |"),
            ],
            "`After | x` does not start a paragraph; two cells over one is none"
        );
        let at = |needle: &str| text.find(needle).unwrap();
        assert!(!s.is_safe_cut(at("\n|---|:-:|")), "header | delimiter");
        assert!(!s.is_safe_cut(at("\nlazy")), "between rows");
        assert!(s.is_safe_cut(at("\n\nAfter")), "after the last row");
        assert!(s.is_safe_cut(at("\n| A")), "before the header");
        assert!(s.is_safe_cut(at("\n|---|\n\n")), "not a table");
    }
    // In containers: a quote's table ends at a line that leaves the quote (a lazy
    // line is no row), a list item's header may stand on the item's first line.
    let text = "> | A | B |\n> |---|---|\n> | 1 | 2 |\n| lazy | x |\n\n\
                    - | C | D |\n  |---|---|\n  | 3 | 4 |\n- next\n\n\
                    > | E |\n|---|\n";
    for s in [scan_all(text), scan_bytewise(text)] {
        let tables: Vec<(&str, &str, usize)> = s
            .tables
            .spans()
            .iter()
            .map(|t| {
                (
                    &text[t.start..t.delim_end],
                    &text[t.start..t.end.unwrap()],
                    t.prefix_len,
                )
            })
            .collect();
        assert_eq!(
            tables,
            [
                (
                    "> | A | B |\n> |---|---|",
                    "> | A | B |\n> |---|---|\n> | 1 | 2 |",
                    2
                ),
                (
                    "- | C | D |\n  |---|---|",
                    "- | C | D |\n  |---|---|\n  | 3 | 4 |",
                    2
                ),
            ],
            "a delimiter row outside the header's quote makes no table"
        );
    }
    // While the line after a header-like line is not complete, no cut after it.
    let mut s = MarkdownScanner::new();
    s.scan("Intro\n\n| A | B |\n|--");
    assert!(!s.is_safe_cut(13) && !s.is_safe_cut(16) && s.is_safe_cut(5));
    s.scan("Intro\n\n| A | B |\n|--x\n");
    assert_eq!(
        s.take_newly_safe(),
        Some(7),
        "not a delimiter row after all"
    );
    assert!(s.is_safe_cut(16));
    // A pipe line in progress may be a header row.
    let mut s = MarkdownScanner::new();
    s.scan("| A | B");
    assert!(!s.is_safe_cut(3));
}

#[test]
fn late_pairs_pair_the_runs_after_an_unmatched_one_at_every_block_boundary() {
    // An unmatched run is literal once its block ends (a blank line, a heading's end, a
    // list item, a block quote, a fence line, indented code, the end of the text); with
    // late pairs the runs after it in that block pair among themselves, and nothing of
    // the next block is paired with them.
    let cases = [
        ("A `` stray and `one` here\n\nnext `", "`one`"),
        ("# A `` stray `one`\nnext `", "`one`"),
        ("A `` stray `one`\n- item `", "`one`"),
        ("A `` stray `one`\n> quote `", "`one`"),
        ("A `` stray `one`\n```\ncode `\n```", "`one`"),
        ("# A `` stray `one`\n\n    code `", "`one`"),
        ("A `` stray `one`", "`one`"),
    ];
    for (text, span) in cases {
        let bytes = text.as_bytes();
        let mut whole = MarkdownScanner::with_late_pairs();
        whole.finish(text);
        whole.end_block(text);
        let mut bytewise = MarkdownScanner::with_late_pairs();
        for end in 1..=bytes.len() {
            bytewise.scan(&text[..end]);
        }
        bytewise.finish(text);
        bytewise.end_block(text);
        for s in [whole, bytewise] {
            let spans: Vec<&str> = s
                .code_spans()
                .iter()
                .filter_map(|c| c.end.map(|e| &text[c.start..e]))
                .collect();
            assert_eq!(spans, [span], "{text:?}");
            let at = text.find(span).unwrap() + 1;
            assert!(s.code_at(at).is_some(), "{text:?}");
        }
        // The plain scanner leaves them unpaired (only safer cuts).
        let plain = scan_all(text);
        assert!(
            plain.code_spans().iter().all(|c| c.end.is_none()),
            "{text:?}"
        );
    }
}

/// The fast paths of a line's start ([`MarkdownScanner::plain_line_start`]: a line that
/// starts with a letter or another byte that starts no block, is a heading or is blank,
/// outside containers and code; the container reading of a line that starts with a letter)
/// read lines exactly as the full paths do: random replies built from lines that start
/// every way (letters, other bytes, blank lines with `\n` and `\r\n`, list items, quotes,
/// indented code, fences, tables, headings and lines that only look like them) holding backticks, brackets, URLs, emphasis runs, pipes and CJK, read in random
/// pieces by a scanner with the fast path and one without, give the same answers at every
/// position and report the same newly safe cuts after every piece.
#[test]
fn the_fast_line_start_reads_as_the_full_one() {
    const STARTS: &[&str] = &[
        "Word ",
        "a",
        "x `code` ",
        "",
        "\r",
        "- ",
        "* ",
        "1. ",
        "2) ",
        "> ",
        "> > ",
        "    ",
        "  ",
        "\t",
        "```\n",
        "~~~ js\n",
        "# ",
        "| a | b |",
        "|---|---|",
        "- [",
        "_",
        "<",
        "[",
        "![",
        "é ",
        "#x ",
        "#",
        "###### ",
        "####### ",
        "#\t",
        "-->",
        "--",
        "---",
        "***\n",
        "*a",
        "+x ",
        "-\u{301}",
        "`",
        "``x",
        "~~ ",
        "~",
    ];
    const BODIES: &[&str] = &[
        "text and more",
        " `a` b ``c`` `",
        "[link](https://x.y/z) ",
        "https://a.b/c?d ",
        "www.example.com. ",
        "*em* **strong** _u_ __v__ ~~s~~ ",
        "a | b | c",
        "漢字かな 한글 ",
        "e\u{301} 👨\u{200d}👩 ",
        "[open ",
        "] (",
        "<https://auto.link> ",
        "\\* \\` ",
        "snake_case_name ",
        "2*3*4 ",
    ];
    for seed in 0..40 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut text = String::new();
        while text.len() < 3_000 {
            text.push_str(STARTS[rng.usize(..STARTS.len())]);
            for _ in 0..rng.usize(..3) {
                text.push_str(BODIES[rng.usize(..BODIES.len())]);
            }
            text.push_str(if rng.u8(..4) == 0 { "\r\n" } else { "\n" });
        }
        for late_pairs in [false, true] {
            let new = || match late_pairs {
                true => MarkdownScanner::with_late_pairs(),
                false => MarkdownScanner::new(),
            };
            let mut fast = new();
            let mut full = new();
            full.use_full_paths();
            let mut t = 0;
            while t < text.len() {
                t = (t + 1 + rng.usize(..200)).min(text.len());
                while !text.is_char_boundary(t) {
                    t += 1;
                }
                fast.scan(&text[..t]);
                full.scan(&text[..t]);
                assert_eq!(
                    fast.take_newly_safe(),
                    full.take_newly_safe(),
                    "{seed} at {t}"
                );
                assert_eq!(fast.line_start(), full.line_start(), "{seed} at {t}");
                assert_eq!(
                    fast.last_line_undecided(&text[..t]),
                    full.last_line_undecided(&text[..t]),
                    "{seed} at {t}"
                );
            }
            for s in [&mut fast, &mut full] {
                s.finish(&text);
                s.end_block(&text);
            }
            assert_eq!(fast.take_newly_safe(), full.take_newly_safe(), "{seed}");
            assert_eq!(fast.fences(), full.fences(), "{seed}");
            assert_eq!(fast.code_spans(), full.code_spans(), "{seed}");
            assert_eq!(fast.indented_blocks(), full.indented_blocks(), "{seed}");
            for p in 0..=text.len() {
                assert_eq!(fast.is_safe_cut(p), full.is_safe_cut(p), "{seed} at {p}");
                assert_eq!(fast.inline_at(p), full.inline_at(p), "{seed} at {p}");
                assert_eq!(fast.emphasis_at(p), full.emphasis_at(p), "{seed} at {p}");
                assert_eq!(fast.table_at(p), full.table_at(p), "{seed} at {p}");
                assert_eq!(
                    fast.item_column_at(p),
                    full.item_column_at(p),
                    "{seed} at {p}"
                );
            }
        }
    }
}

/// The grouped search for text stops finds what a byte-by-byte one does: each byte value
/// at each offset, in texts short and long (past the word-at-a-time head), the first one.
#[test]
fn find_text_stop_finds_the_first_stop() {
    use super::lines::find_text_stop;
    let stop = |b: &u8| matches!(b, b'`' | b'\n' | b'|');
    for b in 0..=255u8 {
        for len in (1..90).chain([200]) {
            for at in 0..len {
                let mut text = vec![b'a'; len];
                text[at] = b;
                if at + 1 < len {
                    text[len - 1] = b'|';
                }
                let expected = text.iter().position(stop);
                assert_eq!(find_text_stop(&text), expected, "{b} at {at} of {len}");
            }
        }
    }
}

/// The scan's inline test for a stop in the last few bytes (a group read back from the
/// text's end) against a walk byte by byte, from every start in the last sixteen bytes.
#[test]
fn tail_has_text_stop_finds_a_stop_after_its_start() {
    use super::lines::tail_has_text_stop;
    let stop = |b: &u8| matches!(b, b'`' | b'\n' | b'|');
    for b in 0..=255u8 {
        for len in 0..40 {
            for at in 0..len {
                let mut text = vec![b'`'; len];
                text[at..].fill(b'a');
                text[at] = b;
                for from in len.saturating_sub(16)..=len {
                    let expected = text[from..].iter().any(stop);
                    assert_eq!(
                        tail_has_text_stop(&text, from),
                        expected,
                        "{b} at {at}, {from} of {len}"
                    );
                }
            }
        }
    }
}

/// The line-end search against a walk byte by byte: a `\n` at each offset of texts of
/// every length around the group sizes and the vector search's start, or none.
#[test]
fn find_newline_finds_the_first_line_end() {
    use super::lines::find_newline;
    for len in (0..100).chain([200]) {
        assert_eq!(find_newline(&vec![b'a'; len]), None, "none in {len}");
        for at in 0..len {
            let mut text = vec![b'a'; len];
            text[at] = b'\n';
            if at + 1 < len {
                text[len - 1] = b'\n';
            }
            assert_eq!(find_newline(&text), Some(at), "{at} of {len}");
        }
    }
}
