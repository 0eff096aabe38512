/* The commands that need no graph: devices, ops, compare, show (cli.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../onnx/onnx_import.h"
#include "../runtime/threads.h"
#include "cli.h"
#include "cliutil.h"
#include "report.h"
#include "show.h"

int ft_cmd_devices(const ft_cli *c)
{
    long cores = ft_usable_cores();
    printf("cpu      CPU reference backend, %ld thread%s (%ld core%s)\n", cores, cores == 1 ? "" : "s", cores,
           cores == 1 ? "" : "s");
    ft_device_info d[64];
    ft_error e = {0};
    int n = ft_cuda_devices(d, 64, &e);
    if (n < 0)
        printf("cuda     none: %s\n", e.msg);
    for (int i = 0; i < n && i < 64; i++)
        printf("cuda:%-3d %s, %.1f GiB, compute capability %d.%d, %d SMs\n", d[i].index, d[i].name,
               (double)d[i].total_bytes / (1024.0 * 1024 * 1024), d[i].cc_major, d[i].cc_minor, d[i].sm_count);
    ft_error be = {0};
    if (ft_backend_get("cuda", &be))
        printf("         CUDA backend: %s (loaded)\n", ft_cuda_backend_path());
    else
        printf("         CUDA backend: %s\n", be.msg);
    return cli_stdout_status(0);
}

/* `ftrun ops --onnx`: the ONNX importer's catalogue (src/onnx/onnx_ops.c). */
static void print_onnx_ops(FILE *f)
{
    const onx_op_status *l;
    int n = onx_op_catalogue(&l), cnt[3] = {0};
    for (int i = 0; i < n; i++) {
        const char *how = l[i].how == 'm' ? "mapped" : l[i].how == 'f' ? "folded" : "missing";
        cnt[l[i].how == 'm' ? 0 : l[i].how == 'f' ? 1 : 2]++;
        fprintf(f, "%-28s %-8s %s\n", l[i].op_type, how, l[i].note);
    }
    fprintf(f, "%d ONNX operators: %d mapped to ftrun ops, %d folded at load time only, %d missing\n", n, cnt[0],
            cnt[1], cnt[2]);
}

int ft_cmd_ops(const ft_cli *c)
{
    if (c->onnx_ops) {
        print_onnx_ops(stdout);
        return cli_stdout_status(0);
    }
    const ft_backend *be = NULL;
    char dn[32];
    int di, rc;
    if (c->device && strcmp(c->device, "auto") && (rc = pick_device(c->device, 0, c->quiet, &be, &di, dn, sizeof dn)) != 0)
        return rc;
    ft_print_ops(stdout, be);
    return cli_stdout_status(0);
}

/* `compare A B`: B holds the expected values. */
int ft_cmd_compare(const ft_cli *c)
{
    ft_error err = {0};
    ft_arrays a, b;
    if (ft_arrays_load(c->graph, &a, &err))
        return cli_fail(&err);
    if (ft_arrays_load(c->graph2, &b, &err)) {
        ft_arrays_free(&a);
        return cli_fail(&err);
    }
    int single = a.n == 1 && b.n == 1, problems = 0, bad = 0, compared = 0;
    for (int i = 0; i < b.n && !single; i++) {
        int found = 0;
        for (int j = 0; j < a.n && !found; j++)
            found = !strcmp(a.name[j], b.name[i]);
        if (!found) {
            fprintf(stderr, "%s: error: compare: '%s' is in %s but not in %s\n", ft_prog, b.name[i], b.where[i], c->graph);
            problems++;
        }
    }
    for (int i = 0; i < a.n; i++) {
        int j = single ? 0 : -1;
        for (int k = 0; k < b.n && j < 0; k++)
            if (!strcmp(a.name[i], b.name[k]))
                j = k;
        if (j < 0) {
            fprintf(stderr, "%s: error: compare: '%s' is in %s but not in %s\n", ft_prog, a.name[i], a.where[i], c->graph2);
            problems++;
            continue;
        }
        const ft_npy *x = &a.a[i], *y = &b.a[j];
        char label[1100], s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (!strcmp(a.name[i], b.name[j]))
            snprintf(label, sizeof label, "'%s'", a.name[i]);
        else
            snprintf(label, sizeof label, "'%s' vs '%s'", a.name[i], b.name[j]);
        if (x->dtype != y->dtype || !ft_shape_eq(&x->shape, &y->shape)) {
            fprintf(stderr, "%s: error: compare: %s: %s %s in %s but %s %s in %s\n", ft_prog, label, ft_dtype_name(x->dtype),
                    ft_shape_str(&x->shape, s1), a.where[i], ft_dtype_name(y->dtype), ft_shape_str(&y->shape, s2), b.where[j]);
            problems++;
            continue;
        }
        ft_tol tol = cli_tol(c, x->dtype);
        ft_cmp cm;
        ft_compare(x->data, y->data, x->dtype, &x->shape, tol, &cm);
        char prefix[1200];
        snprintf(prefix, sizeof prefix, "%s %s %s", label, ft_dtype_name(x->dtype), ft_shape_str(&x->shape, s1));
        ft_report_cmp(stdout, prefix, &cm, x->dtype, &x->shape, tol);
        compared++;
        bad += cm.n_bad != 0;
    }
    if (!c->quiet) {
        if (problems)
            fprintf(stderr, "%s: compare: %d problem%s with the operands (missing tensors, dtype or shape); %d of %d compared tensors out of tolerance\n",
                    ft_prog, problems, problems == 1 ? "" : "s", bad, compared);
        else if (bad)
            fprintf(stderr, "%s: compare: %d of %d tensor%s out of tolerance\n", ft_prog, bad, compared, compared == 1 ? "" : "s");
        else
            fprintf(stderr, "%s: compare: %d tensor%s\n", ft_prog, compared, compared == 1 ? " matches" : "s match");
    }
    ft_arrays_free(&a);
    ft_arrays_free(&b);
    return cli_stdout_status(problems ? FT_EGRAPH : bad ? FT_EMISMATCH : 0);
}

int ft_cmd_show(const ft_cli *c)
{
    ft_error err = {0};
    return ft_show_files(stdout, (const char *const *)c->pos, c->npos, &err) ? cli_fail(&err) : cli_stdout_status(0);
}
