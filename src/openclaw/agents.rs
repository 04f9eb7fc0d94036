//! Which agent's settings apply: the one named in the [`Selection`](super::Selection), else
//! the one OpenClaw would route the channel and account to.
//!
//! OpenClaw keeps its agents in `agents.entries` (keyed by id) or, in the older form it
//! still reads, `agents.list` (an array of objects with an `id`); when both are present it
//! reads `entries` only. Without a named agent it routes a message by its `bindings`
//! (`[{ agentId, match: { channel, accountId, peer, guildId, teamId, roles } }]`), the most
//! specific binding first, and falls back to the agent marked `default: true` (the first
//! one if several are), else to the first agent.
//!
//! replystream reads settings for a channel and account, not for one conversation, so only
//! the two binding tiers that depend on nothing else apply here, in OpenClaw's order: a
//! binding for the account (its `accountId`, or no `accountId` for the account called
//! `default`), then one for the whole channel (`accountId: "*"`). A binding for the
//! selected channel and account that also matches on a peer, guild, team or roles depends
//! on the conversation: it is reported as not applied.

use super::json5::{Kind, Pos, Value};
use super::{OpenClawError, Reader, WarningKind, boolean, error_at, object_of, text};

/// The keys of a binding's `match` that depend on the conversation, not only on the channel
/// and account.
const CONVERSATION_KEYS: &[&str] = &["peer", "parentPeer", "guildId", "teamId", "roles"];

/// The channel and account the settings are read for: what a binding is matched against.
pub(super) struct Route<'a> {
    /// The channel id, as selected.
    pub(super) channel: &'a str,
    /// The account id: the one selected or the channel's default account; `default` when
    /// the channel has no account chosen.
    pub(super) account: &'a str,
}

/// One configured agent.
struct Agent<'v> {
    id: String,
    path: String,
    entry: &'v Value,
    default: bool,
}

impl Reader {
    /// Applies the chosen agent's entry (see the module docs) and returns its id.
    pub(super) fn agent_entry(
        &mut self,
        root: &Value,
        agents: Option<&Value>,
        named: Option<&str>,
        route: &Route<'_>,
    ) -> Result<Option<String>, OpenClawError> {
        let roster = match agents {
            Some(agents) => self.roster(agents)?,
            None => Vec::new(),
        };
        let agents_pos = agents.map_or(Pos::default(), |a| a.pos);
        let chosen = match named {
            Some(id) => match roster.iter().rev().find(|a| a.id == id) {
                Some(agent) => Some(agent),
                None => {
                    let names: Vec<&str> = roster.iter().map(|a| a.id.as_str()).collect();
                    let names = if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    };
                    return Err(error_at(
                        "agents",
                        agents_pos,
                        format!(
                            "no agent `{id}` in agents.entries or agents.list (configured: {names})"
                        ),
                    ));
                }
            },
            None => {
                let bound = match root.get("bindings") {
                    Some(bindings) => self.bound_agent(bindings, route)?,
                    None => None,
                };
                match bound {
                    Some((agent_id, path, pos)) => {
                        let found = roster.iter().find(|a| a.id.eq_ignore_ascii_case(&agent_id));
                        if found.is_none() {
                            self.warn(
                                &format!("{path}.agentId"),
                                pos,
                                WarningKind::Selection,
                                format!(
                                    "agent `{agent_id}` is not configured; the default agent \
                                     is used, as OpenClaw does"
                                ),
                            );
                        }
                        found.or_else(|| self.default_agent(agents_pos, &roster))
                    }
                    None => self.default_agent(agents_pos, &roster),
                }
            }
        };
        let Some(agent) = chosen else {
            return Ok(None);
        };
        let id = agent.id.clone();
        self.agent_level(agent.entry, &agent.path, false)?;
        Ok(Some(id))
    }

    /// Every configured agent, in file order.
    fn roster<'v>(&mut self, agents: &'v Value) -> Result<Vec<Agent<'v>>, OpenClawError> {
        let mut roster = Vec::new();
        if let Some(entries) = agents.get("entries") {
            for m in object_of(entries, "agents.entries")? {
                let path = format!("agents.entries.{}", m.key);
                let default = self.default_mark(&m.value, &path)?;
                roster.push(Agent {
                    id: m.key.clone(),
                    path,
                    entry: &m.value,
                    default,
                });
            }
            if let Some(list) = agents.get("list") {
                self.warn(
                    "agents.list",
                    list.pos,
                    WarningKind::Ignored,
                    "agents.entries is set, and OpenClaw then reads it alone: this list is \
                     not used"
                        .to_owned(),
                );
            }
            return Ok(roster);
        }
        if let Some(list) = agents.get("list") {
            let Kind::Array(items) = &list.kind else {
                return Err(error_at(
                    "agents.list",
                    list.pos,
                    format!("expected an array, got {}", list.describe()),
                ));
            };
            for (i, item) in items.iter().enumerate() {
                let path = format!("agents.list[{i}]");
                object_of(item, &path)?;
                let id = match item.get("id") {
                    Some(id) => text(id, &format!("{path}.id"))?,
                    None => {
                        return Err(error_at(&path, item.pos, "an agent needs an `id`"));
                    }
                };
                let default = self.default_mark(item, &path)?;
                roster.push(Agent {
                    id,
                    path,
                    entry: item,
                    default,
                });
            }
        }
        Ok(roster)
    }

    /// An agent's `default` flag.
    fn default_mark(&mut self, entry: &Value, path: &str) -> Result<bool, OpenClawError> {
        match entry.get("default") {
            Some(v) => boolean(v, &format!("{path}.default")),
            None => Ok(false),
        }
    }

    /// The agent OpenClaw falls back to: the first marked `default: true`, else the first.
    fn default_agent<'r, 'v>(
        &mut self,
        agents_pos: Pos,
        roster: &'r [Agent<'v>],
    ) -> Option<&'r Agent<'v>> {
        let marked: Vec<&Agent<'v>> = roster.iter().filter(|a| a.default).collect();
        if let [first, _, ..] = marked.as_slice() {
            let second = marked[1];
            self.warn(
                &format!("{}.default", second.path),
                second
                    .entry
                    .get("default")
                    .map_or(Pos::default(), |v| v.pos),
                WarningKind::Ignored,
                format!(
                    "{} agents are marked default: the first, `{}`, is used, as OpenClaw does",
                    marked.len(),
                    first.id
                ),
            );
        }
        if let Some(first) = marked.first() {
            return Some(first);
        }
        let first = roster.first()?;
        if roster.len() > 1 {
            self.warn(
                "agents",
                agents_pos,
                WarningKind::Selection,
                format!(
                    "{} agents, none marked `default: true` and none bound to this channel: \
                     the first, `{}`, is used, as OpenClaw does",
                    roster.len(),
                    first.id
                ),
            );
        }
        Some(first)
    }

    /// The agent a binding routes `route` to, with the binding's path and the position of its
    /// `agentId`: the first binding
    /// for the account, else the first for the whole channel.
    fn bound_agent(
        &mut self,
        bindings: &Value,
        route: &Route<'_>,
    ) -> Result<Option<(String, String, Pos)>, OpenClawError> {
        let Kind::Array(items) = &bindings.kind else {
            return Err(error_at(
                "bindings",
                bindings.pos,
                format!("expected an array, got {}", bindings.describe()),
            ));
        };
        let mut for_account = None;
        let mut for_channel = None;
        for (i, binding) in items.iter().enumerate() {
            let path = format!("bindings[{i}]");
            object_of(binding, &path)?;
            self.check_keys(
                binding,
                &path,
                &["agentId", "match", "type", "comment"],
                &[],
                false,
            );
            let Some(rule) = binding.get("match") else {
                return Err(error_at(&path, binding.pos, "a binding needs a `match`"));
            };
            let rule_path = format!("{path}.match");
            object_of(rule, &rule_path)?;
            let mut known = vec!["channel", "accountId"];
            known.extend_from_slice(CONVERSATION_KEYS);
            self.check_keys(rule, &rule_path, &known, &[], false);
            let channel = match rule.get("channel") {
                Some(c) => text(c, &format!("{rule_path}.channel"))?,
                None => continue, // OpenClaw matches no channel then
            };
            if !channel.trim().eq_ignore_ascii_case(route.channel.trim()) {
                continue;
            }
            let account = match rule.get("accountId") {
                Some(a) => text(a, &format!("{rule_path}.accountId"))?,
                None => String::new(),
            };
            let account = account.trim();
            let whole_channel = account == "*";
            let matches = whole_channel
                || (account.is_empty() && route.account.eq_ignore_ascii_case("default"))
                || account.eq_ignore_ascii_case(route.account);
            if !matches {
                continue;
            }
            let Some(agent_id) = binding.get("agentId") else {
                return Err(error_at(&path, binding.pos, "a binding needs an `agentId`"));
            };
            let agent_pos = agent_id.pos;
            let agent_id = text(agent_id, &format!("{path}.agentId"))?;
            if let Some((key, value)) = CONVERSATION_KEYS
                .iter()
                .find_map(|k| rule.get(k).map(|v| (k, v)))
            {
                self.warn(
                    &format!("{rule_path}.{key}"),
                    value.pos,
                    WarningKind::Ignored,
                    format!(
                        "this binding routes one conversation (by {key}) to `{agent_id}`; \
                         settings are read per channel and account, so it is not applied"
                    ),
                );
                continue;
            }
            let slot = if whole_channel {
                &mut for_channel
            } else {
                &mut for_account
            };
            slot.get_or_insert((agent_id, path, agent_pos));
        }
        Ok(for_account.or(for_channel))
    }
}
