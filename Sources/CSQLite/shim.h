#ifndef SCOPED_CSQLITE_SHIM_H
#define SCOPED_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT as a callable: Swift cannot import the macro's function-pointer cast.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
