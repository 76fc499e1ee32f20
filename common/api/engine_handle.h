// What the C API's engine handle (rttcc_engine_t) holds: shared by the C
// faces of the engine (c_api.cc) and of the exchange (exchange_api.cc).
#pragma once
#include <memory>
#include <string>

#include "engine/engine.h"

struct rttcc_engine {
    std::unique_ptr<rttcc::Engine> impl;  // the engine
    std::string notes;                    // what auto choices chose, for a verbose log line
};
