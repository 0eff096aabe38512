/* Unit checks of the numbers ftrun reports and of the memory plan, linked
 * against ftrun's own objects (tests/cli/unit.bats builds and runs it).
 *
 *   unit stats V1 V2 ...   the run statistics of these times (src/cli/report.h),
 *                          one "name value" line each, for NumPy to recompute
 *   unit plan GRAPH...     every graph's memory plan (src/runtime/plan.h):
 *                          tensors alive at the same time never share bytes,
 *                          and a node's outputs never overlap its inputs;
 *                          prints "GRAPH: ok N tensors, arena B" or the
 *                          offending pair, exit status 1
 *   unit idle MAX [SPIN]   ft_idle_cores(MAX) (src/runtime/threads.h), with
 *                          SPIN threads of this process busy meanwhile
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/profile.h"
#include "graph/graph.h"
#include "runtime/plan.h"
#include "runtime/threads.h"

static volatile int spin_stop;

static void *spin(void *arg)
{
    (void)arg;
    while (!spin_stop)
        ;
    return NULL;
}

static int idle(int argc, char **argv)
{
    if (argc < 1)
        return 2;
    int max = atoi(argv[0]), n = argc > 1 ? atoi(argv[1]) : 0;
    pthread_t *t = calloc((size_t)n + 1, sizeof *t);
    int started = 0;
    for (int i = 0; i < n && t; i++)
        started += pthread_create(&t[i], NULL, spin, NULL) == 0;
    nanosleep(&(struct timespec){0, 50000000}, NULL); /* the spinners on the run queues */
    int got = ft_idle_cores(max);
    spin_stop = 1;
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    if (started != n)
        return 1;
    printf("%d\n", got);
    return 0;
}

static int stats(int argc, char **argv)
{
    int n = argc;
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return 2;
    for (int i = 0; i < n; i++)
        v[i] = strtod(argv[i], NULL);
    ft_stats s;
    ft_stats_compute(v, n, &s);
    printf("min %.17g\nmedian %.17g\nmean %.17g\np90 %.17g\np99 %.17g\nmax %.17g\n", s.min, s.median, s.mean, s.p90, s.p99,
           s.max);
    free(v);
    return 0;
}

/* Tensor a hands its bytes to b (src/runtime/plan.c): b is the one output of
 * a reshape-like node (it writes nothing) whose one input is a, run at the
 * step where a's life ends and b's begins, at a's offset. */
static int handed_over(const ft_graph *g, const ft_plan *p, const int *first, const int *last, int a, int b)
{
    if (first[b] < 0 || last[a] != first[b] || p->offset[a] != p->offset[b])
        return 0;
    const ft_node *n = &g->nodes[g->order[first[b]]];
    int view = n->op == FT_OP_RESHAPE || n->op == FT_OP_FLATTEN || n->op == FT_OP_SQUEEZE || n->op == FT_OP_UNSQUEEZE ||
               n->op == FT_OP_IDENTITY;
    return view && n->n_in == 1 && n->in[0] == a && n->n_out == 1 && n->out[0] == b;
}

static int check_plan(const char *path)
{
    ft_error err = {0};
    ft_graph *g = NULL;
    ft_load_opts lo = {.seed_override = -1};
    if (ft_graph_load(path, &lo, &g, &err) || ft_graph_validate(g, &err)) {
        printf("%s: %s\n", path, err.msg);
        ft_graph_free(g);
        return 1;
    }
    ft_plan p;
    if (ft_plan_build(g, &p, &err)) {
        printf("%s: %s\n", path, err.msg);
        ft_graph_free(g);
        return 1;
    }
    /* life of each tensor in execution steps: from the node that writes it
     * (or -1: before the run) to the last node that reads it (or the end) */
    int nt = g->n_tensors, bad = 0;
    int *first = malloc((size_t)nt * sizeof(int)), *last = malloc((size_t)nt * sizeof(int));
    for (int i = 0; i < nt; i++) {
        first[i] = -1;
        last[i] = ft_plan_is_persistent(&g->tensors[i]) ? g->n_nodes : -1;
    }
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        for (int o = 0; o < n->n_out; o++) {
            first[n->out[o]] = k;
            if (last[n->out[o]] < k)
                last[n->out[o]] = k;
        }
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0 && last[n->in[i]] < k)
                last[n->in[i]] = k;
    }
    for (int a = 0; a < nt && !bad; a++)
        for (int b = a + 1; b < nt && !bad; b++) {
            uint64_t sa = ft_tensor_bytes(&g->tensors[a]), sb = ft_tensor_bytes(&g->tensors[b]);
            if (!sa || !sb)
                continue;
            int live_together = first[a] <= last[b] && first[b] <= last[a];
            int share = p.offset[a] < p.offset[b] + sb && p.offset[b] < p.offset[a] + sa;
            if (live_together && share && !handed_over(g, &p, first, last, a, b) &&
                !handed_over(g, &p, first, last, b, a)) {
                printf("%s: tensors '%s' (steps %d to %d, bytes %llu+%llu) and '%s' (steps %d to %d, bytes %llu+%llu) "
                       "are alive together and share bytes\n",
                       path, g->tensors[a].name, first[a], last[a], (unsigned long long)p.offset[a], (unsigned long long)sa,
                       g->tensors[b].name, first[b], last[b], (unsigned long long)p.offset[b], (unsigned long long)sb);
                bad = 1;
            }
            if (p.offset[a] + sa > p.arena_bytes || p.offset[b] + sb > p.arena_bytes) {
                printf("%s: a tensor lies beyond the arena of %llu bytes\n", path, (unsigned long long)p.arena_bytes);
                bad = 1;
            }
        }
    if (!bad)
        printf("%s: ok %d tensors, arena %llu\n", path, nt, (unsigned long long)p.arena_bytes);
    free(first);
    free(last);
    ft_plan_free(&p);
    ft_graph_free(g);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "stats"))
        return stats(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "plan")) {
        int rc = 0;
        for (int i = 2; i < argc; i++)
            rc |= check_plan(argv[i]);
        return rc;
    }
    if (argc >= 2 && !strcmp(argv[1], "idle"))
        return idle(argc - 2, argv + 2);
    fprintf(stderr, "usage: unit stats V... | unit plan GRAPH... | unit idle MAX [SPIN]\n");
    return 2;
}
