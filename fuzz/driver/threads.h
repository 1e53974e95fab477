/* Running a program's parts on threads, one per domain: the schedule target (FUZZ_SCHEDULED) and
 * its stress on free-running threads (FUZZ_FREE_THREADS). */
#ifndef FUZZ_DRIVER_THREADS_H
#define FUZZ_DRIVER_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/driver/state.h"

/* Run the program's parts on their threads: 1 when every thread ended (the program then ends on
 * d0, running, on the calling thread, whose mutator is d->muts[0]), 0 when the collector is stuck
 * (reported; the threads stay parked and the heap cannot be used again), -1 when out of memory. */
int drv_run_threads(driver *d, const uint8_t *data, size_t size);

#endif /* FUZZ_DRIVER_THREADS_H */
