//! The learner's side of one collection's messages: the policy broadcast, the jobs handed
//! out, one rank's message, and the deadline on a silent rank.

use super::*;

impl MpiSampler {
    /// Sends every rank the policy of this collection; the bytes sent.
    pub(super) fn broadcast(&mut self, policy: &PolicySnapshot) -> Result<usize> {
        let mut bytes = 0;
        for remote in &mut self.remotes {
            let begin = ToWorker::Begin {
                version: policy.version,
                actor: policy.actor.clone(),
                critic: policy.critic.clone(),
            };
            bytes += send(&self.world, remote.rank, TO_WORKER, &begin)?;
            remote.last_heard = Instant::now();
        }
        Ok(bytes)
    }

    /// Hands the schedule's next jobs out: to the idle local workers first (taken from the end
    /// of `idle`), then to the ranks with idle workers, in rank order. Returns the local jobs
    /// dispatched and the bytes sent.
    pub(super) fn dispatch(
        &mut self,
        schedule: &mut Schedule,
        idle: &mut Vec<usize>,
        req: &CollectRequest,
        policy: &Arc<PolicySnapshot>,
        cancel_above: &Arc<AtomicU64>,
    ) -> Result<(usize, usize)> {
        let (mut local, mut bytes) = (0, 0);
        while let Some(&w) = idle.last() {
            let Some(t) = schedule.next_job() else { break };
            self.pool.dispatch(w, Job::new(t, req, policy, cancel_above))?;
            idle.pop();
            local += 1;
        }
        for remote in self.remotes.iter_mut().filter(|r| r.idle > 0) {
            while remote.idle > 0 {
                let Some(t) = schedule.next_job() else { break };
                let job = ToWorker::Job(JobSpec::new(t, req));
                bytes += send(&self.world, remote.rank, TO_WORKER, &job)?;
                remote.idle -= 1;
                remote.in_flight += 1;
            }
        }
        Ok((local, bytes))
    }

    /// One message from a rank, if one waits: a job's result goes to `outputs` (with its rank
    /// and a label naming the worker and host); the bytes received.
    pub(super) fn receive(
        &mut self,
        outputs: &mut Vec<(usize, String, JobOutput)>,
    ) -> Result<Option<usize>> {
        let Some((rank, msg, n)) = try_receive::<ToLearner>(&self.world, TO_LEARNER)? else {
            return Ok(None);
        };
        let remote = self
            .remotes
            .iter_mut()
            .find(|r| r.rank == rank)
            .ok_or_else(|| anyhow!("a message from unknown rank {rank}"))?;
        remote.last_heard = Instant::now();
        match msg {
            ToLearner::Result { worker, id, kind, seed, result } => {
                remote.idle += 1;
                remote.in_flight -= 1;
                let out = JobOutput { worker, id, kind, seed, result: *result };
                let label = format!("{rank}.{worker} on {}", remote.host);
                outputs.push((rank as usize, label, out));
            }
            ToLearner::Heartbeat => {}
            ToLearner::Hello { .. } => bail!("rank {rank} said hello twice"),
        }
        Ok(Some(n))
    }

    /// Aborts every rank when one with jobs in flight has been silent past [`DEADLINE`]: it
    /// died or its link is down.
    pub(super) fn abort_on_silence(&self) {
        let silent =
            self.remotes.iter().find(|r| r.in_flight > 0 && r.last_heard.elapsed() > DEADLINE);
        if let Some(r) = silent {
            abort(
                &self.world,
                &format!(
                    "rank {} ({}) has not answered for {} s with {} job(s) in flight: it died \
                     or its link is down; the run dir holds the last complete iteration \
                     (continue with --previous)",
                    r.rank,
                    r.host,
                    DEADLINE.as_secs(),
                    r.in_flight
                ),
            );
        }
    }
}
