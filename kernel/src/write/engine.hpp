// Private: the engines behind Writer, one per strategy family (the way ADIOS2 has one
// engine per format). Writer (writer.hpp) chooses one at create / append and forwards
// every call to it:
//
//   InPlaceEngine  strategies "auto", "collective", "independent": every rank writes its
//                  own rows into the file (write_step.hpp lists its phases, a file each)
//   Forwarder      strategies "aggregated", "dedicated": the ranks hand each step to the
//                  rank that writes it, a node leader or an I/O rank (forward.hpp)
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rewind/kernel/error.hpp"
#include "rewind/kernel/writer.hpp"

namespace rwd::kernel::detail {

struct WriterState;

/// What Writer asks of an engine; each call has Writer's contract (writer.hpp).
class Engine {
 public:
  virtual ~Engine() = default;
  virtual WriteStats write_step(const StepInfo& info, const LocalGrids& grids) = 0;
  virtual LocalGrids span(const StepInfo& info, const LocalGrids& like) = 0;
  virtual void prepare(const StepInfo& info, const LocalGrids& grids, const std::vector<FieldSpec>* consume) = 0;
  virtual WriteStats hand_off(const StepInfo& info, const LocalGrids& grids, bool write,
                              const std::vector<FieldSpec>& consume) = 0;
  [[nodiscard]] virtual bool consumer_declined() const = 0;
  virtual void settle() = 0;
  virtual void close() = 0;
  [[nodiscard]] virtual const std::string& path() const = 0;
  [[nodiscard]] virtual const CommonInfo& common() const = 0;
  [[nodiscard]] virtual std::int64_t last_step() const = 0;
};

/// Every rank writes its own rows: the file is open here (WriterState), and write_step
/// returns once the step is committed. Nothing to prepare (the file's creation was
/// create's cost), nothing to settle, no consumer (hand_off refuses).
class InPlaceEngine final : public Engine {
 public:
  /// Collective. Writer::create / Writer::append, for a strategy that writes in place.
  static std::unique_ptr<InPlaceEngine> create(MPI_Comm comm, const std::string& path, const CommonInfo& common,
                                               const IoOptions& options, const WriterEnv& env);
  static std::unique_ptr<InPlaceEngine> append(MPI_Comm comm, const std::string& path, const IoOptions& options,
                                               const WriterEnv& env);
  explicit InPlaceEngine(std::unique_ptr<WriterState> w);
  ~InPlaceEngine() override;

  WriteStats write_step(const StepInfo& info, const LocalGrids& grids) override;
  LocalGrids span(const StepInfo& info, const LocalGrids& like) override;
  void prepare(const StepInfo&, const LocalGrids&, const std::vector<FieldSpec>*) override {}
  WriteStats hand_off(const StepInfo& info, const LocalGrids& grids, bool write,
                      const std::vector<FieldSpec>& consume) override;
  [[nodiscard]] bool consumer_declined() const override { return false; }
  void settle() override {}
  void close() override;
  [[nodiscard]] const std::string& path() const override;
  [[nodiscard]] const CommonInfo& common() const override;
  [[nodiscard]] std::int64_t last_step() const override;

 private:
  WriterState& open_state() const;  ///< throws FileError(invalid_argument) once closed
  std::unique_ptr<WriterState> w_;
};

/// The step's phases in place (write_step.cpp): every rank writes its rows and the step is
/// committed when it returns. Collective; throws FileError (the same on every rank), the
/// step then half-written (InPlaceEngine::write_step abandons it).
WriteStats write_in_place(WriterState& w, const StepInfo& info, const LocalGrids& grids);

/// The refusal of a step for a consumer where no dedicated I/O ranks take it.
FileError no_consumer(const std::string& path);

}  // namespace rwd::kernel::detail
