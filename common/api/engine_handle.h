// What the C API's engine handle (rttcc_engine_t) holds: shared by the C
// faces of the engine (api/engine.cc) and of the exchange (api/exchange.cc).
#pragma once
#include <memory>
#include <string>

#include "engine/engine.h"

struct rttcc_engine {
    std::shared_ptr<rttcc::Engine> impl;  // the engine: the handle is its only owner, hubs watch it (weak_ptr)
    std::string notes;                    // what auto choices chose, for a verbose log line
};
