//! Statistics shared by every module: the shape of an estimate (criterion.rs's {point, standard error,
//! confidence interval}) and normal quantiles. Statistics code never prints.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::error::{Error, Result};

/// A confidence interval at a stated level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ConfidenceInterval {
    /// Lower bound.
    pub lower_bound: f64,
    /// Upper bound.
    pub upper_bound: f64,
    /// Coverage level, e.g. 0.95.
    pub confidence_level: f64,
}

/// A point estimate with its standard error and a confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The point estimate.
    pub point_estimate: f64,
    /// Its standard error.
    pub standard_error: f64,
    /// The interval, point ± z·SE unless a method says otherwise.
    pub confidence_interval: ConfidenceInterval,
}

impl Estimate {
    /// A normal-theory estimate: point ± z(level)·SE.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `level` is not in (0, 1) or the standard error is negative or not finite.
    ///
    /// ```
    /// let e = alsim::stats::Estimate::normal(2.83, 0.01, 0.95).unwrap();
    /// assert!((e.confidence_interval.upper_bound - 2.8496).abs() < 1e-4);
    /// ```
    pub fn normal(point: f64, standard_error: f64, level: f64) -> Result<Estimate> {
        if !standard_error.is_finite() || standard_error < 0.0 {
            return Err(Error::invalid("standard error", format!("{standard_error} is not a valid standard error")));
        }
        let half = z_two_sided(level)? * standard_error;
        Ok(Estimate {
            point_estimate: point,
            standard_error,
            confidence_interval: ConfidenceInterval {
                lower_bound: point - half,
                upper_bound: point + half,
                confidence_level: level,
            },
        })
    }

    /// Whether the interval contains `value`.
    pub fn covers(&self, value: f64) -> bool {
        self.confidence_interval.lower_bound <= value && value <= self.confidence_interval.upper_bound
    }
}

/// The two-sided standard normal quantile z with P(|Z| ≤ z) = `level`.
///
/// # Errors
/// [`Error::Invalid`] when `level` is not strictly between 0 and 1.
pub fn z_two_sided(level: f64) -> Result<f64> {
    if !(level > 0.0 && level < 1.0) {
        return Err(Error::invalid("confidence level", format!("{level} must be strictly between 0 and 1")));
    }
    let normal = Normal::standard();
    Ok(normal.inverse_cdf(0.5 + level / 2.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_for_95_percent() {
        assert!((z_two_sided(0.95).unwrap() - 1.959964).abs() < 1e-5);
        assert!(z_two_sided(1.0).is_err());
    }
}
