/* The commands that need no graph: devices, ops, compare, show (cli.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../onnx/onnx_import.h"
#include "../io/ftg.h"
#include "../runtime/threads.h"
#include "cli.h"
#include "cliutil.h"
#include "report.h"
#include "show.h"
#include "../pipeline/arrays.h"

/* --json: a document on standard output, with the schema first (man/ftrun.1,
 * JSON OUTPUT); it consumes root. */
static int print_json(cJSON *root, unsigned long oom0)
{
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text || ft_json_oom() != oom0) {
        cJSON_free(text);
        return cli_fail(&(ft_error){FT_ERUNTIME, "out of memory writing JSON"});
    }
    printf("%s\n", text);
    cJSON_free(text);
    return cli_stdout_status(0);
}

static cJSON *json_doc(const char *schema)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", schema);
    cJSON_AddStringToObject(root, "ftrun_version", FT_VERSION);
    return root;
}

int ft_cmd_devices(const ft_cli *c)
{
    long cores = ft_usable_cores();
    ft_device_info d[64];
    ft_error e = {0}, be = {0};
    int n = ft_cuda_devices(d, 64, &e);
    int loaded = ft_backend_get("cuda", &be) != NULL;
    if (c->json) {
        unsigned long oom0 = ft_json_oom();
        cJSON *root = json_doc("ftrun-devices/1");
        cJSON *cpu = cJSON_AddObjectToObject(root, "cpu");
        cJSON_AddStringToObject(cpu, "description", "CPU reference backend");
        cJSON_AddNumberToObject(cpu, "threads", (double)cores);
        cJSON_AddNumberToObject(cpu, "cores", (double)cores);
        cJSON *cu = cJSON_AddObjectToObject(root, "cuda");
        if (n < 0)
            cJSON_AddStringToObject(cu, "none", e.msg);
        else
            cJSON_AddNullToObject(cu, "none");
        cJSON *arr = cJSON_AddArrayToObject(cu, "devices");
        for (int i = 0; i < n && i < 64; i++) {
            cJSON *o = cJSON_CreateObject();
            char cc[16], name[16];
            snprintf(name, sizeof name, "cuda:%d", d[i].index);
            cJSON_AddStringToObject(o, "device", name);
            cJSON_AddStringToObject(o, "name", d[i].name);
            cJSON_AddNumberToObject(o, "memory_bytes", (double)d[i].total_bytes);
            snprintf(cc, sizeof cc, "%d.%d", d[i].cc_major, d[i].cc_minor);
            cJSON_AddStringToObject(o, "compute_capability", cc);
            cJSON_AddNumberToObject(o, "sm_count", d[i].sm_count);
            cJSON_AddItemToArray(arr, o);
        }
        cJSON *jb = cJSON_AddObjectToObject(cu, "backend");
        cJSON_AddStringToObject(jb, "path", ft_cuda_backend_path());
        cJSON_AddBoolToObject(jb, "loaded", loaded);
        if (loaded)
            cJSON_AddNullToObject(jb, "error");
        else
            cJSON_AddStringToObject(jb, "error", be.msg);
        return print_json(root, oom0);
    }
    printf("cpu      CPU reference backend, %ld thread%s (%ld core%s)\n", cores, cores == 1 ? "" : "s", cores,
           cores == 1 ? "" : "s");
    if (n < 0)
        printf("cuda     none: %s\n", e.msg);
    for (int i = 0; i < n && i < 64; i++)
        printf("cuda:%-3d %s, %.1f GiB, compute capability %d.%d, %d SMs\n", d[i].index, d[i].name,
               (double)d[i].total_bytes / (1024.0 * 1024 * 1024), d[i].cc_major, d[i].cc_minor, d[i].sm_count);
    if (loaded)
        printf("         CUDA backend: %s (loaded)\n", ft_cuda_backend_path());
    else
        printf("         CUDA backend: %s\n", be.msg);
    return cli_stdout_status(0);
}

/* `ftrun ops --onnx`: the ONNX importer's catalogue (src/onnx/onnx_ops.c). */
static int print_onnx_ops(FILE *f, int json)
{
    const onx_op_status *l;
    int n = onx_op_catalogue(&l), cnt[3] = {0};
    unsigned long oom0 = ft_json_oom();
    cJSON *root = json ? json_doc("ftrun-onnx-ops/1") : NULL, *arr = json ? cJSON_AddArrayToObject(root, "operators") : NULL;
    for (int i = 0; i < n; i++) {
        const char *how = l[i].how == 'm' ? "mapped" : l[i].how == 'f' ? "folded" : "missing";
        cnt[l[i].how == 'm' ? 0 : l[i].how == 'f' ? 1 : 2]++;
        if (!json) {
            fprintf(f, "%-28s %-8s %s\n", l[i].op_type, how, l[i].note);
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "op_type", l[i].op_type);
        cJSON_AddStringToObject(o, "status", how);
        cJSON_AddStringToObject(o, "note", l[i].note);
        cJSON_AddItemToArray(arr, o);
    }
    if (json) {
        cJSON *k = cJSON_AddObjectToObject(root, "counts");
        cJSON_AddNumberToObject(k, "operators", n);
        cJSON_AddNumberToObject(k, "mapped", cnt[0]);
        cJSON_AddNumberToObject(k, "folded", cnt[1]);
        cJSON_AddNumberToObject(k, "missing", cnt[2]);
        return print_json(root, oom0);
    }
    fprintf(f, "%d ONNX operators: %d mapped to ftrun ops, %d folded at load time only, %d missing\n", n, cnt[0],
            cnt[1], cnt[2]);
    return cli_stdout_status(0);
}

/* The dtypes of a mask as a JSON array of names. */
static cJSON *dtypes_json(ft_dtype_mask m)
{
    cJSON *a = cJSON_CreateArray();
    for (int d = 0; d < FT_DTYPE_COUNT; d++)
        if (ft_dtype_in((ft_dtype)d, m))
            cJSON_AddItemToArray(a, cJSON_CreateString(ft_dtype_name((ft_dtype)d)));
    return a;
}

int ft_cmd_ops(const ft_cli *c)
{
    if (c->onnx_ops)
        return print_onnx_ops(stdout, c->json);
    const ft_backend *be = NULL;
    char dn[32];
    int di, rc;
    if (c->device && strcmp(c->device, "auto") && (rc = pick_device(c->device, 0, c->quiet, &be, &di, dn, sizeof dn)) != 0)
        return rc;
    if (!c->json) {
        ft_print_ops(stdout, be);
        return cli_stdout_status(0);
    }
    ft_error e = {0};
    const ft_backend *cuda = ft_backend_get("cuda", &e);
    const ft_backend *bes[2] = {&ft_cpu_backend, cuda};
    unsigned long oom0 = ft_json_oom();
    cJSON *root = json_doc("ftrun-ops/1");
    cJSON *jb = cJSON_AddArrayToObject(root, "backends");
    for (int b = 0; b < 2; b++)
        if (bes[b] && (!be || be == bes[b]))
            cJSON_AddItemToArray(jb, cJSON_CreateString(bes[b]->name));
    cJSON *arr = cJSON_AddArrayToObject(root, "ops");
    for (int op = 0; op < FT_OP_COUNT; op++) {
        const ft_op_info *oi = ft_op_get((ft_op)op);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "op", oi->name);
        cJSON_AddBoolToObject(o, "available", oi->available);
        cJSON_AddItemToObject(o, "format", dtypes_json(oi->available ? oi->dtypes : 0));
        cJSON *per = cJSON_AddObjectToObject(o, "backends");
        for (int b = 0; b < 2; b++) {
            if (!bes[b] || (be && be != bes[b]))
                continue;
            ft_dtype_mask mk = ft_backend_dtypes(bes[b], (ft_op)op);
            cJSON_AddItemToObject(per, bes[b]->name, dtypes_json(oi->available ? (mk & oi->dtypes) : 0));
        }
        cJSON_AddItemToArray(arr, o);
    }
    return print_json(root, oom0);
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
