// ctrl_bench — the controller's own time per request, measured on the data structures the two
// controllers' released code uses, for servesim's `controller` costs (docs/config.md) in
// Figure 10's setting. Not servesim code: a measurement whose numbers go into
// experiments/paper/resnet10_controller.sweep.json (README beside this file).
//
// Clockwork (malixian/clockwork @ 5917620, src/clockwork/controller/
// concurrent_infer_and_load_scheduler.{h,cpp}, INFER4, the `paper` preset):
//   Model::enqueue      one std::make_shared<StrategyImpl> per supported batch size, and the
//                       request pushed to every GPU holding the model (tbb::concurrent_queue);
//   GPU::schedule_infer (5 infer threads) drains those into the GPU's
//                       std::priority_queue<Strategy, std::deque<Strategy>, Comparator>
//                       (ordered by priority = deadline - estimate(b)) and pops from its top
//                       every strategy taken up, invalidated or past its deadline.
//   So each strategy is pushed once and popped once per GPU holding the model, and a GPU's
//   heap holds every strategy whose priority is still ahead: about rate x SLO x sizes.
// Symphony (abcdabcd987/nexuslb @ dbb9043, src/nexus/dispatcher/rankmt/): a model thread per
//   model queues the request and recomputes the model's candidate (ModelThread::EnqueueQuery,
//   UpdateCandidate); the one rank thread keeps the candidates ranked
//   (value_ranked_splay_map; std::set here) and grants a free GPU the best one per batch.
//
// Single-threaded, deterministic arrivals (rate R, SLO 100 ms); clock = the request's arrival
// time, so heap sizes are those of a controller keeping up with R.
//   g++ -std=c++17 -O2 ctrl_bench.cpp -o ctrl_bench && ./ctrl_bench [RATE...]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <set>
#include <vector>

namespace cw {
struct Model;
struct StrategyImpl {
    std::atomic_bool valid{true};
    uint64_t priority, deadline, request_id;
    unsigned batch_size;
    Model *model;
};
using Strategy = std::shared_ptr<StrategyImpl>;
struct Comparator {  // the released code's: the smallest priority on top
    bool operator()(const Strategy &l, const Strategy &r) const { return l->priority > r->priority; }
};
struct Request {
    uint64_t id, deadline;
    std::vector<Strategy> strategies;
};
using RequestP = std::shared_ptr<Request>;
struct GPU {
    std::mutex in_mu;                       // stands for tbb::concurrent_queue's push/pop
    std::deque<RequestP> incoming;
    std::priority_queue<Strategy, std::deque<Strategy>, Comparator> heap;
};
}  // namespace cw

static double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Clockwork: ns of controller work per request at `rate` req/s over `models` models held by
// `gpus` GPUs each, `sizes` batch sizes; per-candidate = per request / (gpus x sizes).
static double clockwork(double rate, int models, int gpus, int sizes, double slo_s, int n)
{
    using namespace cw;
    std::vector<GPU> g(gpus);
    const uint64_t slo = (uint64_t)(slo_s * 1e9), dt = (uint64_t)(1e9 / rate);
    std::vector<uint64_t> est(sizes + 1);
    for (int b = 1; b <= sizes; b++)        // a ResNet50-like l(b) (ms): 1.9 + 0.55 b
        est[b] = (uint64_t)((1.9 + 0.55 * b) * 1e6);
    uint64_t t = 0, id = 0;
    int warm = (int)(rate * slo_s * 1.5);   // fill the heaps to their steady size first
    double t0 = 0;
    for (int i = 0; i < warm + n; i++) {
        if (i == warm)
            t0 = now_s();
        t += dt;
        auto r = std::make_shared<Request>();
        r->id = id++, r->deadline = t + slo;
        r->strategies.reserve(sizes);
        for (int b = sizes; b >= 1; b--) {  // Model::enqueue
            auto s = std::make_shared<StrategyImpl>();
            s->priority = r->deadline - est[b], s->deadline = r->deadline;
            s->batch_size = b, s->request_id = r->id, s->model = nullptr;
            r->strategies.push_back(std::move(s));
        }
        for (auto &x : g) {                 // add_strategies on every GPU holding the model
            std::lock_guard<std::mutex> l(x.in_mu);
            x.incoming.push_back(r);
        }
        for (auto &x : g) {                 // GPU::schedule_infer
            RequestP q;
            for (;;) {
                {
                    std::lock_guard<std::mutex> l(x.in_mu);
                    if (x.incoming.empty())
                        break;
                    q = std::move(x.incoming.front());
                    x.incoming.pop_front();
                }
                for (auto &s : q->strategies)
                    if (s->valid)
                        x.heap.push(s);
            }
            while (!x.heap.empty() && x.heap.top()->priority <= t)   // taken up or expired
                x.heap.pop();
        }
    }
    (void)models;
    return (now_s() - t0) * 1e9 / n;
}

// Symphony: ns per request (model thread + the rank thread's update) and per batch (the rank
// thread's grant), `models` models, batches of `batch`.
static void symphony(int models, int batch, int n, double *per_req, double *per_batch)
{
    struct Cand { uint64_t key; int m; bool operator<(const Cand &o) const { return key < o.key || (key == o.key && m < o.m); } };
    std::vector<std::deque<uint64_t>> q(models);
    std::vector<uint64_t> cur(models, 0);
    std::set<Cand> rank;
    std::mutex mu;                          // the rank thread's message queue
    std::vector<std::pair<int, uint64_t>> msgs;
    uint64_t t = 0;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        int m = i % models;
        t += 1000;
        q[m].push_back(t + 100000000);      // EnqueueQuery: the sorted query list
        uint64_t cand = q[m].front() - (uint64_t)(q[m].size() < (size_t)batch ? q[m].size() : batch) * 550000;
        {
            std::lock_guard<std::mutex> l(mu); // PostExecutionCandidate
            msgs.emplace_back(m, cand);
        }
        std::vector<std::pair<int, uint64_t>> got;
        {
            std::lock_guard<std::mutex> l(mu);
            got.swap(msgs);
        }
        for (auto &x : got) {               // the rank thread: re-rank the model
            if (cur[x.first])
                rank.erase(Cand{cur[x.first], x.first});
            rank.insert(Cand{x.second, x.first});
            cur[x.first] = x.second;
        }
        if (q[m].size() >= (size_t)batch * 4) // keep queues bounded (batches taken below)
            q[m].erase(q[m].begin(), q[m].begin() + batch);
    }
    *per_req = (now_s() - t0) * 1e9 / n;
    // the grant per batch: the best candidate out, the model's batch out of its queue, the
    // model re-ranked
    for (int m = 0; m < models; m++)
        for (int k = 0; k < 4 * batch; k++)
            q[m].push_back(t + (uint64_t)k);
    t0 = now_s();
    for (int i = 0; i < n; i++) {
        auto best = rank.begin();
        int m = best->m;
        rank.erase(best);
        for (int k = 0; k < batch; k++) {
            q[m].push_back(q[m].front() + 100000);
            q[m].pop_front();
        }
        cur[m] = q[m].front() + (uint64_t)i;
        rank.insert(Cand{cur[m], m});
    }
    *per_batch = (now_s() - t0) * 1e9 / n;
}

int main(int argc, char **argv)
{
    std::vector<double> rates;
    for (int i = 1; i < argc; i++)
        rates.push_back(atof(argv[i]));
    if (rates.empty())
        rates = {10500, 17500, 24500, 35000};
    const int gpus = 24, sizes = 16, models = 10, n = 20000;
    printf("clockwork INFER4: %d GPUs each holding every model, %d batch sizes, SLO 100 ms\n"
           "%10s %12s %14s %16s\n", gpus, sizes, "rate", "heap/GPU", "us/request", "ns/candidate");
    for (double r : rates) {
        double best = 1e300;
        for (int k = 0; k < 3; k++) {       // the least of 3 (the machine's noise adds only)
            double ns = clockwork(r, models, gpus, sizes, 0.1, n);
            best = ns < best ? ns : best;
        }
        printf("%10.0f %12.0f %14.2f %16.1f\n", r, r * 0.1 * sizes, best / 1e3,
               best / (gpus * sizes));
    }
    double pr = 1e300, pb = 1e300;
    for (int k = 0; k < 3; k++) {
        double a, b;
        symphony(models, 16, 200000, &a, &b);
        pr = a < pr ? a : pr, pb = b < pb ? b : pb;
    }
    printf("symphony rankmt: %d models: %.3f us per request, %.3f us per batch of 16\n", models,
           pr / 1e3, pb / 1e3);
    return 0;
}
