/* The thread count of a run when --threads is not given: the cores that other
 * processes leave idle. On a machine whose cores are shared, a fork/join loop
 * whose threads outnumber the free cores waits at every barrier for a thread
 * that another process holds off its core (a statistics graph ran 2x slower
 * with 2 threads than with 1 beside one busy process on 2 cores); taking only
 * the idle cores keeps the default never much slower than --threads 1.
 *
 * Idle cores = max minus the tasks of other processes ready to run: the
 * running count of /proc/loadavg (every task on a run queue, all CPUs) less
 * this process's own running threads (/proc/self/task/N/stat, state R, read
 * only when the first count is above 1; OpenMP or OpenBLAS threads still
 * spinning after a loop are ours, not load). At least 1, at most max. Where
 * /proc cannot be read, max.
 *
 * Ownership: ft_threads_follow is a caller-owned value; nothing is allocated.
 *
 *   ft_threads_follow tf = {.max = 8};
 *   int t = ft_threads_now(&tf);  // 1..8, sampled at most every FT_THREADS_PERIOD_S
 */
#ifndef FT_THREADS_H
#define FT_THREADS_H

#define FT_THREADS_PERIOD_S 0.01 /* seconds between two looks at the load */

typedef struct ft_threads_follow {
    int max;     /* the most threads (the cores, or --threads) */
    int current; /* the count chosen at the last look (0: none yet) */
    double next; /* ft_now() at which to look again */
} ft_threads_follow;

/* The threads to use now: the last count, or a new look when
 * FT_THREADS_PERIOD_S has passed since the last one. */
int ft_threads_now(ft_threads_follow *tf);

/* One look: max less the other processes' runnable tasks, in [1, max]. */
int ft_idle_cores(int max);

/* The CPUs this process may run on (its affinity mask: taskset, cpusets),
 * else the online ones; at least 1. */
int ft_usable_cores(void);

#endif
