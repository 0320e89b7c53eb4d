// parpat/parpat.hpp — everything of the portable API in one include.
#pragma once

#include "parpat/array.hpp"
#include "parpat/barrier.hpp"
#include "parpat/communicator.hpp"
#include "parpat/device.hpp"
#include "parpat/distributed.hpp"
#include "parpat/dtype.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/histogramdd.hpp"
#include "parpat/io.hpp"
#include "parpat/measure.hpp"
#include "parpat/pairwise.hpp"
#include "parpat/reduce.hpp"
#include "parpat/registry.hpp"
