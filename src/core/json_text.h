// JSON text: the one way the server and the agent write JSON (API answers, status-page
// JSON, notification bodies, exports, the agent's /health and its reports), so that every
// number reads the same everywhere.
//
// Numbers, because people read them (Boost.JSON's own serializer writes 0.25 as 2.5E-1):
//   - integers (int64, uint64) as integers: 42, -7;
//   - doubles in the shortest form that reads back to the same double, in plain decimal
//     between 1e-6 and 1e21 (as JavaScript does): 4.202054724618367, 507.53665331578947,
//     0.25, 0.000001; in exponent form outside it, where plain decimal would be a long run
//     of zeros: 1e-07, 1.5e+21;
//   - a double that holds a whole number keeps a ".0" (5.0, -0.0), so that it reads back
//     as a double, not as an integer, in Boost.JSON, Python and the like;
//   - NaN and infinities, which JSON cannot hold, as null.
// Strings are escaped as JSON requires (" \ and control characters); other bytes pass as
// they are.
#pragma once

#include <string>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace trainwatch {

std::string json_text(const boost::json::value& value);
// The same for an object or an array, without copying it into a value first.
std::string json_text(const boost::json::object& object);
std::string json_text(const boost::json::array& array);

// One double as json_text writes it.
std::string json_number(double value);

}  // namespace trainwatch
