/* sim — the discrete-event engine and the API that policies act through.
 *
 * Time is int64_t nanoseconds; events fire in (time, insertion) order; a run is a pure
 * function of (config, seed, load scale). The engine owns the world: models (with latency
 * tables per executor kind), executors (GPUs), per-model scheduler queues ordered by
 * deadline, requests and batches (from pools: the hot path does not malloc once warm), and
 * the metrics. A policy (policies/) decides *when* and *where* batches run; it reads the
 * queues and the clock and calls sim_dispatch / sim_queue_drop_head / sim_timer_*.
 *
 * The engine is built from a world config (sim_world.h) and a set of arrival sources (below);
 * it parses no file. Life of a request: it arrives at a frontend (lazily generated: one
 * pending arrival per source), its id and deadline reach the scheduler after the control delay and it
 * joins its model's queue (policy on_request). The policy dispatches a batch to an
 * executor: the executor receives it after the control delay plus the per-request data delay,
 * starts it no earlier than the policy's start time and never while another batch runs, and
 * finishes after the profile latency; responses take the response delay. A request ends
 * exactly once: on time (response by its deadline), late, or dropped.
 *
 * Invariants the engine checks on every run (violations abort with values, see SIM_BUG):
 * time never goes backwards; no executor runs two batches at once; no batch is empty, exceeds
 * its model's max batch, or exceeds the executor's memory; every request ends exactly once
 * (arrived = ended + in flight). */
#ifndef SIM_H
#define SIM_H

/* The engine's API is one header per part, each function's contract where it is declared:
 *   sim_types.h      requests, batches, executors, models, arrival sources
 *   sim_run.h        building and running an engine, observers
 *   sim_query.h      what a policy reads: clock, queues, executors, delays, metrics
 *   sim_act.h        what a policy does: dispatch, drop, load, add and remove executors,
 *                    timers, random streams, time series
 *   sim_ledger.h     the GPU ledger: nodes' GPUs and their claims
 *   sim_jobs.h       training jobs
 *   sim_notebooks.h  notebooks on GPU shares
 * A policy includes this header for all of them. */
#include "sim_act.h"
#include "sim_jobs.h"
#include "sim_ledger.h"
#include "sim_llm.h"
#include "sim_notebooks.h"
#include "sim_query.h"
#include "sim_run.h"
#include "sim_types.h"

#endif
