//! `replystream replay TRACE.jsonl`: timed inputs in, actions out, as JSON lines.
//!
//! Each trace line is one input: `{"t": 120, "type": "text_delta", "text": "Hel"}`. `t` is the
//! time in ms (defaults to the previous line's; time never goes back), `seq` an optional
//! sequence number. Types and their fields:
//!
//! | type | fields |
//! |---|---|
//! | `message_start`, `thinking_end`, `finish`, `cancel`, `timer` | — |
//! | `text_delta`, `text_snapshot`, `thinking_delta` | `text` |
//! | `text_end`, `message_end` | optional `text` (the full content) |
//! | `tool_start` | `name` |
//! | `tool_result`, `media`, `final_reply` | optional `text`, `media` (list of URLs) |
//! | `fail` | `error` |
//! | `delivered` | `send_id`, optional `message_ref` |
//! | `delivery_failed` | `send_id`, optional `retry_after_ms`, `permanent` |
//!
//! Between inputs the replay behaves like a host: it fires timers the engine armed and, unless
//! `--no-auto-ack`, acks every send after `--ack-ms` (default 0); its simulated chat gives each
//! new message an id, acked as `message_ref`. Output lines: `{"t", "action": "send", "send_id",
//! "kind", "op", "key", "message_ref", "text", "format", "markdown", "media", "reply_to",
//! "audio_as_voice", "is_error", "lane"}` (`text` is what to post, in `format`; `markdown` the
//! Markdown it was rendered from; with `telegram-entities` also `entities`: objects with
//! `type`, `offset`, `length` and, where they apply, `url` and `language`) (`key` and `message_ref` name the message an edit or delete is about), `{"t", "action": "arm_timer", "deadline"}` (null for none), `{"t", "action": "abort",
//! "reason"}`, `{"t", "action": "idle"}`, and `{"t", "error"}` for an input the engine refused.

use std::io::{self, BufWriter, Write};

use clap::Args;
use replystream::sim::{Ack, Sim};
use replystream::{Action, Entity, Format, OwnedInput, Payload, ReplyTarget, SendId};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::settings::EngineArgs;
use crate::values::{self, MAX_MS};
use crate::{CliError, read_input};

/// `replystream replay`: timed inputs in, actions out.
#[derive(Args, Debug)]
#[command(after_help = TRACE_FORMAT)]
pub(crate) struct ReplayArgs {
    /// The trace: JSON lines of timed inputs; a path, or - for standard input
    #[arg(value_name = "TRACE")]
    file: String,

    /// Acknowledge every send after MS [0..=86400000]
    #[arg(long, value_name = "MS", default_value_t = 0,
          value_parser = values::millis(MAX_MS))]
    ack_ms: u64,

    /// Do not acknowledge sends: the trace holds delivered and delivery_failed inputs
    #[arg(long)]
    no_auto_ack: bool,

    #[command(flatten)]
    engine: EngineArgs,
}

/// The trace format, shown after `replay`'s help.
const TRACE_FORMAT: &str = "\
Trace lines are JSON objects: {\"t\": MS, \"type\": TYPE, ...fields}; t defaults to the previous
line's time and never goes back; seq is an optional sequence number. Types and fields:
  message_start, thinking_end, finish, cancel, timer
  text_delta, text_snapshot, thinking_delta     text
  text_end, message_end                         optional text (the full content)
  tool_start                                    name
  tool_result, media, final_reply               optional text, media (a list of URLs)
  fail                                          error
  delivered                                     send_id, optional message_ref
  delivery_failed                               send_id, optional retry_after_ms, permanent
Output: one JSON object per action (send, arm_timer, abort, idle), and {\"t\", \"error\"} for an
input the engine refused. A send carries its op (create, edit, delete, draft), the key of the
message it is about and, for an edit or delete, that message's message_ref.";

/// One trace line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceLine {
    t: Option<u64>,
    seq: Option<u64>,
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    name: Option<String>,
    error: Option<String>,
    #[serde(default)]
    media: Vec<String>,
    send_id: Option<u64>,
    message_ref: Option<String>,
    retry_after_ms: Option<u64>,
    #[serde(default)]
    permanent: bool,
}

impl TraceLine {
    fn input(self, line_no: usize) -> Result<OwnedInput, CliError> {
        let need = |v: Option<String>, field: &str| {
            v.ok_or_else(|| {
                CliError::runtime(format!(
                    "trace line {line_no}: {} needs \"{field}\"",
                    self.kind
                ))
            })
        };
        let payload = |text: Option<String>, media: Vec<String>| Payload {
            text: text.unwrap_or_default(),
            media,
            ..Payload::default()
        };
        let send_id = self.send_id.map(SendId);
        Ok(match self.kind.as_str() {
            "message_start" => OwnedInput::MessageStart,
            "text_delta" => OwnedInput::TextDelta(need(self.text.clone(), "text")?),
            "text_snapshot" => OwnedInput::TextSnapshot(need(self.text.clone(), "text")?),
            "text_end" => OwnedInput::TextEnd(self.text.clone()),
            "thinking_delta" => OwnedInput::ThinkingDelta(need(self.text.clone(), "text")?),
            "thinking_end" => OwnedInput::ThinkingEnd,
            "tool_start" => OwnedInput::ToolStart {
                name: need(self.name.clone(), "name")?,
            },
            "tool_result" => OwnedInput::ToolResult(payload(self.text.clone(), self.media.clone())),
            "media" => OwnedInput::Media(payload(self.text.clone(), self.media.clone())),
            "message_end" => OwnedInput::MessageEnd(self.text.clone()),
            "final_reply" => OwnedInput::FinalReply(payload(self.text.clone(), self.media.clone())),
            "finish" => OwnedInput::Finish,
            "fail" => OwnedInput::Fail {
                error: need(self.error.clone(), "error")?,
            },
            "cancel" => OwnedInput::Cancel,
            "timer" => OwnedInput::Timer,
            "delivered" => OwnedInput::Delivered {
                send_id: send_id.ok_or_else(|| {
                    CliError::runtime(format!("trace line {line_no}: delivered needs \"send_id\""))
                })?,
                message_ref: self.message_ref.clone(),
            },
            "delivery_failed" => OwnedInput::DeliveryFailed {
                send_id: send_id.ok_or_else(|| {
                    CliError::runtime(format!(
                        "trace line {line_no}: delivery_failed needs \"send_id\""
                    ))
                })?,
                retry_after_ms: self.retry_after_ms,
                permanent: self.permanent,
            },
            other => {
                return Err(CliError::runtime(format!(
                    "trace line {line_no}: unknown input type {other:?}"
                )));
            }
        })
    }
}

/// Runs `replystream replay`.
pub(crate) fn run_replay(args: ReplayArgs) -> Result<(), CliError> {
    let resolved = args.engine.resolve()?;
    let engine = args.engine.engine(&resolved)?;
    let trace = read_input(&args.file)?;
    let ack_ms = args.ack_ms;
    let mut sim = if !args.no_auto_ack {
        Sim::with_policy(
            engine,
            Box::new(move |_, _| Ack::Deliver { after_ms: ack_ms }),
        )
    } else {
        Sim::with_policy(engine, Box::new(|_, _| Ack::Hang))
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let mut printed = 0;
    let mut errors = 0;
    for (i, line) in trace.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let entry: TraceLine = serde_json::from_str(line)
            .map_err(|e| CliError::runtime(format!("trace line {line_no}: {e}")))?;
        let t = entry.t.unwrap_or(sim.now).max(sim.now);
        let seq = entry.seq;
        let input = entry.input(line_no)?;
        sim.at(t);
        match seq {
            Some(seq) => sim.push_seq(seq, input.as_input()),
            None => sim.push(input.as_input()),
        };
        flush(&sim, &mut printed, &mut errors, &mut out)?;
    }
    sim.run_until_idle();
    flush(&sim, &mut printed, &mut errors, &mut out)?;
    out.flush().map_err(CliError::output)?;
    let refused = sim.engine.stats().media_refused;
    if refused > 0 {
        eprintln!(
            "replystream: note: {refused} media reference{} written by the model refused \
             (a local path outside --media-root, or a URL to a private host or not allowed)",
            if refused == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

/// Prints the log entries and errors not printed yet.
fn flush(
    sim: &Sim,
    printed: &mut usize,
    errors: &mut usize,
    out: &mut impl Write,
) -> Result<(), CliError> {
    for (t, action) in &sim.log[*printed..] {
        writeln!(out, "{}", action_json(*t, action)).map_err(CliError::output)?;
    }
    *printed = sim.log.len();
    for (t, error) in &sim.errors[*errors..] {
        writeln!(out, "{}", json!({ "t": t, "error": error })).map_err(CliError::output)?;
    }
    *errors = sim.errors.len();
    Ok(())
}

fn action_json(t: u64, action: &Action) -> Value {
    match action {
        Action::Send(s) => {
            let (op, key) = (s.op.name(), s.op.key().map(|k| k.0));
            let reply_to = match &s.payload.reply_to {
                None => Value::Null,
                Some(ReplyTarget::Current) => json!("current"),
                Some(ReplyTarget::Id(id)) => json!(id),
                Some(_) => Value::Null,
            };
            let lane = s.payload.lane.name();
            let mut out = json!({
                "t": t, "action": "send", "send_id": s.send_id.0, "kind": s.kind.name(),
                "op": op, "key": key, "text": s.text(), "format": s.format.name(),
                "markdown": s.markdown(), "media": s.payload.media,
                "reply_to": reply_to, "audio_as_voice": s.payload.audio_as_voice,
                "is_error": s.payload.is_error, "lane": lane, "message_ref": s.message_ref,
            });
            if s.format == Format::TelegramEntities {
                out["entities"] = entities_json(s.entities());
            }
            out
        }
        Action::ArmTimer { deadline } => {
            let deadline = deadline.map(|d| d.as_millis());
            json!({ "t": t, "action": "arm_timer", "deadline": deadline })
        }
        Action::Abort { reason } => json!({ "t": t, "action": "abort", "reason": reason.name() }),
        Action::Idle => json!({ "t": t, "action": "idle" }),
        other => json!({ "t": t, "action": "unknown", "debug": format!("{other:?}") }),
    }
}

/// Telegram message entities as the Bot API spells them: `type`, `offset` and `length` in
/// UTF-16 units, and `url` / `language` where they apply.
pub(crate) fn entities_json(entities: &[Entity]) -> Value {
    let list = entities.iter().map(|e| {
        let mut o = json!({ "type": e.kind.name(), "offset": e.offset, "length": e.length });
        if let Some(url) = &e.url {
            o["url"] = json!(url);
        }
        if let Some(language) = &e.language {
            o["language"] = json!(language);
        }
        o
    });
    Value::Array(list.collect())
}
