//! Readable snapshots of every format over a few replies (`tests/snapshots/`), so a change
//! in rendering shows as a reviewable diff.
//!
//! ```text
//! INSTA_UPDATE=always cargo test --test render_golden   # or: cargo insta review
//! ```

use replystream::{Format, RenderOptions, TableMode, render};

fn all_formats(file: &str, table_mode: Option<TableMode>) -> String {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let md = std::fs::read_to_string(path).expect("sample reply");
    let options = RenderOptions {
        table_mode,
        ..RenderOptions::default()
    };
    let mut out = String::new();
    for format in Format::ALL {
        let rendered = render(&md, format, &options);
        out.push_str(&format!(
            "===== {} (tables: {})\n",
            format.name(),
            options.table_mode_for(format).name()
        ));
        out.push_str(&rendered.text);
        out.push('\n');
        for e in &rendered.entities {
            out.push_str(&format!(
                "  entity {} offset={} length={}",
                e.kind.name(),
                e.offset,
                e.length
            ));
            if let Some(url) = &e.url {
                out.push_str(&format!(" url={url}"));
            }
            if let Some(lang) = &e.language {
                out.push_str(&format!(" language={lang}"));
            }
            out.push('\n');
        }
    }
    out
}

#[test]
fn formatted_reply() {
    insta::assert_snapshot!("formatted_reply", all_formats("formatted-reply.md", None));
}

#[test]
fn formatted_reply_bullet_tables() {
    insta::assert_snapshot!(
        "formatted_reply_bullets",
        all_formats("formatted-reply.md", Some(TableMode::Bullets))
    );
}

#[test]
fn lists_and_tables() {
    insta::assert_snapshot!("lists_tables", all_formats("lists-tables.md", None));
}

#[test]
fn unicode_mix() {
    insta::assert_snapshot!("unicode_mix", all_formats("unicode-mix.md", None));
}
