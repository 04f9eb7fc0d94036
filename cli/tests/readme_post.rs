//! The `replystream post` commands of the README's "Connect it to a chat", run as written
//! against the fake platforms and a fake model API: the block's `export` lines give the
//! environment (the tokens the fakes accept), and each command gets only `--api-url` (and
//! `--base-url` for a model) added, as a user would to point it at their own server.
#![allow(clippy::disallowed_methods)] // real servers, real time

#[path = "../../connections/tests/fake/mod.rs"]
mod fake;

use std::process::{Command, Stdio};

use fake::slack::FakeSlack;
use fake::telegram::FakeTelegram;

const BIN: &str = env!("CARGO_BIN_EXE_replystream");

/// The repository's root, where the README's relative paths start.
fn root() -> String {
    format!("{}/..", env!("CARGO_MANIFEST_DIR"))
}

/// The `sh` block of the README's "Connect it to a chat" that runs `replystream post`: its
/// exports and its commands (continuation lines joined).
fn readme_commands() -> (Vec<(String, String)>, Vec<Vec<String>>) {
    let readme = std::fs::read_to_string(format!("{}/README.md", root())).unwrap();
    let section = readme
        .split("\n## Connect it to a chat\n")
        .nth(1)
        .expect("the section")
        .split("\n## ")
        .next()
        .unwrap();
    let block = section
        .split("```sh\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .find(|b| b.contains("replystream post"))
        .expect("a sh block with replystream post");
    let joined = block.replace("\\\n", " ");
    let mut env = Vec::new();
    let mut commands = Vec::new();
    for line in joined.lines().map(str::trim) {
        if let Some(assign) = line.strip_prefix("export ") {
            let (k, v) = assign.split_once('=').unwrap();
            env.push((k.to_owned(), v.to_owned()));
        } else if let Some(rest) = line.strip_prefix("replystream post ") {
            commands.push(words(rest));
        }
    }
    (env, commands)
}

/// Shell words: split on spaces, double quotes grouping.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

fn value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1).map(String::as_str)
}

const ANTHROPIC_REPLY: &str = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[]}}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Slow start doubles \"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"the window each round trip.\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_stop\n\
data: {\"type\":\"message_stop\"}\n\n";

#[test]
fn the_readme_post_commands_work_as_written_against_the_fakes() {
    let (env, commands) = readme_commands();
    assert!(commands.len() >= 3, "{commands:?}");
    let token = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("the README exports {name}"))
    };
    let prose =
        std::fs::read_to_string(format!("{}/tests/data/prose-paragraphs.md", root())).unwrap();
    for args in commands {
        let to = value(&args, "--to").expect("--to");
        let chat = value(&args, "--chat").expect("--chat").to_owned();
        let (mut telegram, mut slack) = (None, None);
        let mut extra = Vec::new();
        let api_url = match to {
            "telegram" => telegram
                .insert(FakeTelegram::start(&token("TELEGRAM_BOT_TOKEN"), &[&chat]))
                .url(),
            "slack" => slack
                .insert(FakeSlack::start(&token("SLACK_BOT_TOKEN"), &[&chat]))
                .url(),
            other => panic!("no fake for {other}"),
        };
        extra.extend(["--api-url".to_owned(), api_url]);
        let model = match value(&args, "--from") {
            Some("anthropic") => {
                let key: &'static str = Box::leak(token("ANTHROPIC_API_KEY").into_boxed_str());
                let server = fake::sse_server(ANTHROPIC_REPLY, 31, None, key);
                extra.extend(["--base-url".to_owned(), format!("{}/v1", server.url())]);
                Some(server)
            }
            Some(other) => panic!("no fake model for {other}"),
            None => None,
        };
        let output = Command::new(BIN)
            .current_dir(root())
            .arg("post")
            .args(&args)
            .args(&extra)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let out = String::from_utf8(output.stdout).unwrap();
        let err = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}\n{out}\n{err}");
        assert!(out.contains("everything was delivered"), "{out}");
        for (_, secret) in &env {
            assert!(!out.contains(secret.as_str()) && !err.contains(secret.as_str()));
        }
        let expected = if model.is_some() {
            "Slow start doubles the window each round trip."
        } else {
            prose.as_str()
        };
        let texts = match to {
            "telegram" => telegram.as_ref().unwrap().texts(&chat),
            _ => slack.as_ref().unwrap().texts(&chat),
        };
        fake::tiles(expected, &texts).unwrap_or_else(|e| panic!("{args:?}: {e}\n{texts:?}"));
        if to == "slack" && value(&args, "--preview-transport") == Some("draft") {
            // The preview streamed natively in the thread of the message answered.
            let msgs = slack.as_ref().unwrap().messages(&chat);
            let thread = value(&args, "--current-message");
            assert!(
                msgs.iter()
                    .all(|m| m.streamed && m.thread_ts.as_deref() == thread)
            );
        }
    }
}
