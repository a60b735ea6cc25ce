// Package elastic is the decision layer of elastic jobs (seed 004 §II): from a job's
// progress, its constraint (a deadline or a node-hour budget) and what the cluster has free, it
// decides the node count the job should run on next. It is pure: time is an argument, nothing is
// measured here, and the same Input always gives the same Decision.
//
// # Usage
//
//	cfg := elastic.DefaultConfig()
//	d := elastic.Decide(cfg, elastic.Input{
//		Now: now, Deadline: submitted.Add(30 * time.Minute),
//		Iterations: 10000, Done: 2500,
//		SecPerIter: 0.12, WindowIters: 400, Window: 48 * time.Second,
//		Current: 2, Min: 1, Max: 8, Free: 5,
//		RestartCost: 20 * time.Second, LastResize: lastResize,
//	})
//	if d.Resize { /* checkpoint and relaunch on d.Target nodes */ }
//
// # The rule
//
// A "node" is one launch unit of the job (its processes per node). With n_c nodes running,
// t_pi seconds per iteration measured on them and it_rem iterations left, the seed's estimate of
// the nodes that finish by the deadline is
//
//	n_p = ceil(n_c * t_pi * it_rem / (t_c - t_tn))
//
// where t_c - t_tn is the time left. shoal refines it in three ways, each of which the tests pin:
//
//   - The restart is paid for: the time left is reduced by the job's restart cost (checkpoint +
//     relaunch, learned from the job's own resizes; DefaultRestartCost before the first), and a
//     resize happens only when the predicted gain exceeds that cost.
//   - Scaling is not assumed perfect when the job reports its communication share c: the time per
//     iteration on n nodes is t_pi * ((1-c) * n_c/n + c). With c = 0 this is the seed's model.
//     A job whose share is at least CommHeavy (or that was declared communication-heavy) is never
//     grown: seed 004 moves such jobs to better-connected nodes instead of adding more.
//   - No flapping: nothing changes until the current count has been measured for MinWindow and
//     MinIters, nor within MinInterval of the last resize; a job is grown to finish within
//     Margin of the time left, but shrunk only when the smaller count would finish within
//     ShrinkSlack (< Margin) of it, so a grow is never undone by the next decision.
//
// A job submitted with --force (Input.Force) that the free nodes cannot bring in by its deadline
// grows onto busy nodes too (Input.Busy), as --force places a job on an overloaded cluster.
//
// Under a budget the time rule is replaced by: among the counts whose predicted node-hours (spent
// so far + remaining work + restart) fit the budget, the one finishing earliest, the smallest on a
// tie; when none fits, the cheapest. Budgets are soft, as in the seed: a job is never stopped for
// exceeding one.
package elastic
