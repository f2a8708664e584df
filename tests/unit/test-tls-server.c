/* placeholder */
#include <glib.h>
