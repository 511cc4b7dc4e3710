#ifndef SCOPED_MALLOC_COUNTER_H
#define SCOPED_MALLOC_COUNTER_H

/// The number of heap allocations (malloc, calloc, realloc, aligned allocations) made by the
/// process since it started. The benchmark executable defines these functions itself, so every
/// allocation in the process goes through them.
long scoped_malloc_count(void);

#endif
