// vtkRewindLiveSource: sliding windows of a running (or served) Rewind simulation, from
// its collector over TCP (docs/collector-protocol.md) with the C++ client
// (rewind/collector/client.hpp).
//
// Connection: Host, PortNumber, Token, or ContactFile (a live run's file: its job); every connect and every request has a deadline
// (Timeout, seconds), so an unreachable or silent collector costs at most that long and
// ends in one readable error (vtkErrorMacro, also in LastError), never a hang. Errors:
// cannot connect, refused token, another protocol version, not a collector, no answer in
// time, and the server's own (no such step, unknown variable, ...). The connection is
// kept between updates and made again after an error or when Host/PortNumber/Token change.
//
// Window (vtkRewindWindowSource): box, budget (0 = the server's cap), cell arrays (those
// the collector offers), cell types. Time: a time selector of the protocol -- "live" (the
// run's current state, default), "latest", "N" (step number), "#i", "t=T" (the last
// committed step at or before T) -- in File: one of the run's timelines (RunFiles; "" =
// the file the run writes now, else a branch made in the job). UseTimeAxis puts File's
// timeline (a branch's through its parents: rwd::paraview::live_timeline) on ParaView's
// time axis instead, so the time slider browses the run's past; only then does the
// output have a data time.
//
// The first update connects (not the creation of the source: its port is not set yet);
// then updates happen when a property changes and on Refresh() (the panel's button),
// which fetches the current state again. In parallel the first process fetches the
// window and the other pieces stay empty. Information: RunFiles, RunSteps (file, step, time,
// kind per committed step), Server (the collector's name and whether it is live), Futures
// (file, parent, state, step per future of a live job, status_reply.futures). A future of
// a job computing several futures: File names it (its file; "" = the first) and Time
// "live" shows its current state.
// Steering is in the plugin's Python module rewind_steering (docs/paraview.md).
#ifndef vtkRewindLiveSource_h
#define vtkRewindLiveSource_h

#include <memory>

#include "vtkRewindWindowSource.h"

class vtkStringArray;

class REWINDREADERS_EXPORT vtkRewindLiveSource : public vtkRewindWindowSource {
 public:
  static vtkRewindLiveSource* New();
  vtkTypeMacro(vtkRewindLiveSource, vtkRewindWindowSource);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  void SetHost(const char* host);
  vtkGetStringMacro(Host);
  void SetPort(int port);
  vtkGetMacro(Port, int);
  /// The token; "" = TokenFile's, else the environment's (collector::resolve_token).
  void SetToken(const char* token);
  vtkGetStringMacro(Token);
  /// A file holding the token (first line; chmod 600), used when Token is "".
  void SetTokenFile(const char* file);
  vtkGetStringMacro(TokenFile);
  /// A live run's output file RUN.h5 (or its contact file RUN.h5.contact): connect to the
  /// job writing it, through the contact file its collector writes (host, port, token;
  /// collector/contact.hpp), where the file system is shared. "" (default): Host and
  /// Port. Token and TokenFile, when given, win over the contact file's token.
  void SetContactFile(const char* file);
  vtkGetStringMacro(ContactFile);
  /// Deadline of the connect and of every request, in seconds.
  vtkSetClampMacro(Timeout, double, 0.1, 3600.0);
  vtkGetMacro(Timeout, double);
  vtkSetStringMacro(Time);
  vtkGetStringMacro(Time);
  vtkSetStringMacro(File);
  vtkGetStringMacro(File);
  /// 1: the committed steps of File go on ParaView's time axis and ParaView's time picks
  /// the step shown (the last at or before it); Time is then not used. Connects when set.
  vtkSetMacro(UseTimeAxis, vtkTypeBool);
  vtkGetMacro(UseTimeAxis, vtkTypeBool);
  vtkBooleanMacro(UseTimeAxis, vtkTypeBool);

  /// Fetch again on the next update (the state of a live run moves on).
  void Refresh();

  /// The run's timelines (info_reply.files), after an update.
  vtkStringArray* GetRunFiles();
  /// Four strings per committed step: file, step, time, kind (steps_reply).
  vtkStringArray* GetRunSteps();
  /// Four strings per future of a live job (status_reply.futures, revision 1.8): file,
  /// parent, state, step; empty for a server of files or one before 1.8.
  vtkStringArray* GetFutures();
  /// "NAME (live)" or "NAME (files)", "" when not connected.
  const char* GetServer();

 protected:
  vtkRewindLiveSource();
  ~vtkRewindLiveSource() override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

 private:
  vtkRewindLiveSource(const vtkRewindLiveSource&) = delete;
  void operator=(const vtkRewindLiveSource&) = delete;

  /// Connects if needed and fetches info and steps (variables, timelines); reports
  /// and returns false on failure.
  bool FetchInformation();

  char* Host = nullptr;
  int Port = 7400;
  char* Token = nullptr;
  char* TokenFile = nullptr;
  char* ContactFile = nullptr;
  double Timeout = 10.0;
  char* Time = nullptr;
  char* File = nullptr;
  vtkTypeBool UseTimeAxis = 0;
  struct Internals;
  std::unique_ptr<Internals> Internal;
};

#endif
