//! A new reading of the configuration file: the servers whose entry is new start, those that
//! left stop, those whose entry changed start again; the others, and their calls, are not
//! touched. A file that cannot be used is one warning, and the running set stays.

use super::member::{Member, MemberState, ServerSetup};
use super::{Gateway, Phase};

impl Gateway {
    /// Reads the file again and applies it.
    pub(super) fn reload(&mut self) {
        if matches!(self.phase, Phase::Closing) {
            return;
        }
        let Some(reload) = &self.reload else {
            return;
        };
        match reload() {
            Ok(servers) => self.apply(servers),
            Err(e) => {
                tracing::warn!(target: "gateway", "the configuration file changed, and is not used: {e}; the running servers stay as they are")
            }
        }
    }

    /// Applies the servers of a new reading.
    fn apply(&mut self, servers: Vec<ServerSetup>) {
        let (mut started, mut restarted, mut stopped) = (0, 0, 0);
        let present: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
        for i in 0..self.members.len() {
            let m = &self.members[i];
            if m.removed || present.contains(&m.setup.name) {
                continue;
            }
            self.remove(i);
            stopped += 1;
        }
        for setup in servers {
            let at = self
                .members
                .iter()
                .position(|m| !m.removed && m.setup.name == setup.name);
            match at {
                // A failed server is tried again at each edit of the file.
                Some(i) if self.members[i].setup.fingerprint == setup.fingerprint => {
                    let m = &mut self.members[i];
                    if matches!(m.state, MemberState::Failed { .. }) && m.run.is_none() {
                        m.ends.clear();
                        self.start_run(i);
                        restarted += 1;
                    }
                }
                Some(i) => {
                    if let Err(clash) = self.table.set_space(i, setup.namespace.clone()) {
                        tracing::warn!(target: "gateway", "{}: its new entry is not used: {} would be those of {} ({})",
                            setup.name, clash.what(), self.server_name(clash.first), clash.token);
                        continue;
                    }
                    self.replace(i, setup);
                    restarted += 1;
                }
                None => {
                    let i = self.members.len();
                    if let Err(clash) = self.table.set_space(i, setup.namespace.clone()) {
                        tracing::warn!(target: "gateway", "{}: it is not started: {} would be those of {} ({})",
                            setup.name, clash.what(), self.server_name(clash.first), clash.token);
                        continue;
                    }
                    self.members.push(Member::new(setup));
                    self.start_run(i);
                    started += 1;
                }
            }
        }
        tracing::info!(target: "gateway", "the configuration file changed: {started} server(s) started, {stopped} stopped, {restarted} started again");
    }

    /// The name of the server `i`.
    fn server_name(&self, i: usize) -> &str {
        self.members.get(i).map_or("?", |m| m.setup.name.as_str())
    }

    /// The server `i` left the file: its names no longer resolve, its items leave the lists,
    /// and its run stops for good.
    fn remove(&mut self, i: usize) {
        self.table.remove_space(i);
        let m = &mut self.members[i];
        m.removed = true;
        m.subscriptions.clear();
        let joined = m.joined().is_some();
        let result = m.ready().cloned();
        m.state = MemberState::Stopping;
        if let Some(run) = &mut m.run {
            run.input = None;
        }
        if let (true, Some(result)) = (joined, result) {
            self.announce_lists_of(&result);
        }
    }

    /// The entry of the server `i` changed: its run stops and the new one starts at once
    /// (the list changes come when it joins); a server that waits for its restart starts now.
    fn replace(&mut self, i: usize, setup: ServerSetup) {
        let m = &mut self.members[i];
        m.setup = setup;
        m.ends.clear();
        match &mut m.run {
            Some(run) => {
                run.input = None;
                m.restart_now = true;
                m.state = MemberState::Stopping;
            }
            None => self.start_run(i),
        }
    }
}
