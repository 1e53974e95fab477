/* The two pieces of driver state that callbacks without a useful parameter read (see state.h). */
#include "fuzz/driver/state.h"

__thread mutator *drv_thread_mutator;
driver *drv_running;
