/* fly_npy.h — NumPy's .npy files, read and written without NumPy.
 *
 * The format (numpy/lib/format.py): the magic "\x93NUMPY", a major and a
 * minor version byte, the header's length (2 bytes little-endian in version
 * 1.0, 4 bytes in 2.0 and 3.0), then the header, a Python dict literal
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces to a multiple of 64 bytes and ended by '\n', then the
 * elements. Version 3.0 differs from 2.0 only in allowing UTF-8 in the
 * header.
 *
 * Arrays of bool, signed and unsigned integers and floats (f2, f4, f8),
 * little-endian, in C order, are read and written. Anything else is refused
 * with a sentence saying what was found (fortran_order True, big-endian
 * data, complex or structured dtypes, a malformed or truncated header, data
 * shorter or longer than the header says). */
#ifndef FLY_NPY_H
#define FLY_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* NumPy's own limit on dimensions (NPY_MAXDIMS before NumPy 2). */
enum { FLY_NPY_MAX_DIMS = 32 };

typedef struct FlyNpyArray {
  char kind;         /* 'b' bool, 'i' signed integer, 'u' unsigned, 'f' float */
  unsigned itemsize; /* bytes per element: 1 (b, i, u), 2, 4 or 8 */
  int ndim;          /* 0 for a scalar array */
  int64_t shape[FLY_NPY_MAX_DIMS];
  void *data; /* count * itemsize bytes, little-endian, C order; malloc'd, owned */
} FlyNpyArray;

/* How many elements a's shape holds (1 for a scalar array). The shape has
   been checked not to overflow when a was read. */
uint64_t fly_npy_count(const FlyNpyArray *a);

/* The header's dtype as NumPy writes it: "<f4", "|i1", "|b1"; NULL for a
   kind and size this file does not handle. */
const char *fly_npy_descr(char kind, unsigned itemsize);

/* Reads the header of a .npy file from its first n bytes: fills a's kind,
   itemsize, ndim and shape (data stays NULL) and *data_offset, where the
   elements start. When n is too short for the header, says so and sets
   *need to the bytes needed (0 for any other failure), so that a reader
   can fetch more and try again. False with the reason in why. */
bool fly_npy_parse_header(const void *bytes, size_t n, FlyNpyArray *a, size_t *data_offset,
                          size_t *need, char *why, size_t why_size);

/* A whole .npy file held in memory: the header checked, and exactly as many
   data bytes as it says, copied into a->data. */
bool fly_npy_decode(const void *bytes, size_t n, FlyNpyArray *a, char *why, size_t why_size);

/* Reads the file at path (the reason, errno's text included, in why). */
bool fly_npy_read(const char *path, FlyNpyArray *a, char *why, size_t why_size);
/* The same from a stream at its start. Nothing is allocated for the data
   before its length is known good: a regular file's size is compared with
   the header first, and a stream that is not one (a pipe) is read into a
   buffer that grows only as its bytes arrive. */
bool fly_npy_read_stream(FILE *f, FlyNpyArray *a, char *why, size_t why_size);

/* Writes a (version 1.0) to path whole or not at all (fly_output.h): a
   failure, a full disk included, leaves no partial file, and readers never
   see one. */
bool fly_npy_write(const char *path, const FlyNpyArray *a, char *why, size_t why_size);

/* Frees a's data. */
void fly_npy_release(FlyNpyArray *a);

#endif
