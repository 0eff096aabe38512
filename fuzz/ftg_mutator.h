/* Mutation of binary graphs (.ftg) for the ftg and run harnesses
 * (fuzz/README.md): the container stays valid while its JSON header (edited
 * by json_mutator.h) or its data section changes. */
#ifndef FT_FUZZ_FTG_MUTATOR_H
#define FT_FUZZ_FTG_MUTATOR_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/ftg.h"
#include "json_mutator.h"

static uint64_t fz_rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Gives every "blob" lying inside the data section the CRC-32 of its bytes, so
 * that mutated blob bytes reach inflate and the value checks. */
static size_t fz_fix_crcs(char *hdr, size_t hl, size_t cap, const uint8_t *sec, size_t dlen)
{
    cJSON *doc = cJSON_ParseWithLength(hdr, hl);
    cJSON *ts = cJSON_GetObjectItemCaseSensitive(doc, "tensors"), *t;
    cJSON_ArrayForEach(t, ts)
    {
        cJSON *b = cJSON_GetObjectItemCaseSensitive(t, "blob");
        cJSON *off = cJSON_GetObjectItemCaseSensitive(b, "offset"), *st = cJSON_GetObjectItemCaseSensitive(b, "stored");
        if (!cJSON_IsNumber(off) || !cJSON_IsNumber(st) || !(off->valuedouble >= 0) || !(st->valuedouble >= 0) ||
            off->valuedouble + st->valuedouble > (double)dlen)
            continue;
        uint32_t c = (uint32_t)crc32(0, sec + (size_t)off->valuedouble, (uInt)st->valuedouble);
        cJSON_DeleteItemFromObjectCaseSensitive(b, "crc32");
        cJSON_AddNumberToObject(b, "crc32", (double)c);
    }
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    size_t n = 0;
    if (text && strlen(text) <= cap) {
        n = strlen(text);
        memcpy(hdr, text, n);
    }
    cJSON_free(text);
    return n ? n : hl;
}

/* Keeps the container valid while mutating its parts: the JSON header (edited
 * as a document), or the data section (then the CRCs are recomputed); one
 * mutation in four is libFuzzer's own on the whole file. */
static size_t ftg_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    jm_rng r = {seed};
    uint32_t choice = jm_below(&r, 4);
    if (choice == 3 || size < FT_FTG_FIXED || memcmp(data, FT_FTG_MAGIC, 8) != 0)
        return LLVMFuzzerMutate(data, size, max_size);
    uint64_t h = fz_rd64(data + 16);
    if (h > size - FT_FTG_FIXED)
        return LLVMFuzzerMutate(data, size, max_size);
    size_t d = (size_t)((FT_FTG_FIXED + h + FT_FTG_ALIGN - 1) / FT_FTG_ALIGN * FT_FTG_ALIGN);
    size_t dlen = d < size ? size - d : 0;
    char *hdr = malloc(max_size + 1);
    uint8_t *sec = malloc(max_size + 1);
    if (!hdr || !sec) {
        free(hdr);
        free(sec);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    memcpy(hdr, data + FT_FTG_FIXED, (size_t)h);
    memcpy(sec, data + d, dlen);
    size_t hl = (size_t)h;
    if (choice < 2) {
        size_t n = jm_mutate_text(hdr, hl, hdr, max_size, seed);
        if (n)
            hl = n;
    } else {
        dlen = dlen ? LLVMFuzzerMutate(sec, dlen, max_size > d ? max_size - d : dlen) : 0;
    }
    if (choice == 2 || jm_below(&r, 2))
        hl = fz_fix_crcs(hdr, hl, max_size, sec, dlen);
    size_t nd = (FT_FTG_FIXED + hl + FT_FTG_ALIGN - 1) / FT_FTG_ALIGN * FT_FTG_ALIGN;
    size_t total = nd + dlen;
    if (total > max_size) {
        free(hdr);
        free(sec);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    memset(data + 16, 0, 8);
    for (int i = 0; i < 8; i++)
        data[16 + i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(data + FT_FTG_FIXED, hdr, hl);
    memset(data + FT_FTG_FIXED + hl, 0, nd - FT_FTG_FIXED - hl);
    memcpy(data + nd, sec, dlen);
    free(hdr);
    free(sec);
    return total;
}

#endif
