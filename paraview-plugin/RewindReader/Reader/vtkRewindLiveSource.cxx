#include "vtkRewindLiveSource.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "client_errors.hpp"
#include "rewind/collector/client.hpp"
#include "rewind/collector/contact.hpp"
#include "rewind/collector/handler.hpp"
#include "rewind/collector/token.hpp"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkObjectFactory.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkTable.h"
#include "window_vtk.hpp"

vtkStandardNewMacro(vtkRewindLiveSource);

namespace col = rwd::collector;

struct vtkRewindLiveSource::Internals {
  std::optional<col::Client> Client;
  col::ServerInfo Info;
  std::string Server;
  std::string Where;  ///< "HOST:PORT" of the connection, and the contact file's hint
  bool Armed = false;   ///< updated once: RequestInformation connects from now on
  bool Failed = false;  ///< this update's connection failed (and said so)
  vtkNew<vtkStringArray> RunFiles;
  vtkNew<vtkStringArray> RunSteps;
  vtkNew<vtkStringArray> Futures;
  std::vector<rwd::paraview::AxisStep> Axis;  ///< the timeline UseTimeAxis shows
  std::vector<double> Times;                   ///< its times
};

vtkRewindLiveSource::vtkRewindLiveSource() : Internal(new Internals) {
  this->SetHost("127.0.0.1");
  this->SetToken("");
  this->SetTokenFile("");
  this->SetContactFile("");
  this->SetTime("live");
  this->SetFile("");
}

vtkRewindLiveSource::~vtkRewindLiveSource() {
  this->Internal->Client.reset();  // says bye while the strings still exist
  delete[] this->Host;
  delete[] this->Token;
  delete[] this->TokenFile;
  delete[] this->ContactFile;
  this->SetTime(nullptr);
  this->SetFile(nullptr);
}

void vtkRewindLiveSource::PrintSelf(ostream& os, vtkIndent indent) {
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Host: " << (this->Host ? this->Host : "") << "\n";
  os << indent << "Port: " << this->Port << "\n";
  os << indent << "ContactFile: " << (this->ContactFile ? this->ContactFile : "") << "\n";
  os << indent << "Timeout: " << this->Timeout << "\n";
  os << indent << "Time: " << (this->Time ? this->Time : "") << "\n";
  os << indent << "File: " << (this->File ? this->File : "") << "\n";
}

namespace {
void set_string(char*& member, const char* value) {
  delete[] member;
  member = nullptr;
  if (!value) return;
  const std::string s(value);
  member = new char[s.size() + 1];
  s.copy(member, s.size());
  member[s.size()] = '\0';
}
}  // namespace

// Connection settings: a change drops the connection (the next update connects anew).
void vtkRewindLiveSource::SetHost(const char* host) {
  if (this->Host && host && std::string(this->Host) == host) return;
  set_string(this->Host, host);
  this->Internal->Client.reset();
  this->Modified();
}

void vtkRewindLiveSource::SetToken(const char* token) {
  if (this->Token && token && std::string(this->Token) == token) return;
  set_string(this->Token, token);
  this->Internal->Client.reset();
  this->Modified();
}

void vtkRewindLiveSource::SetTokenFile(const char* file) {
  if (this->TokenFile && file && std::string(this->TokenFile) == file) return;
  set_string(this->TokenFile, file);
  this->Internal->Client.reset();
  this->Modified();
}

void vtkRewindLiveSource::SetContactFile(const char* file) {
  if (this->ContactFile && file && std::string(this->ContactFile) == file) return;
  set_string(this->ContactFile, file);
  this->Internal->Client.reset();
  this->Modified();
}

void vtkRewindLiveSource::SetPort(int port) {
  if (port == this->Port) return;
  this->Port = port;
  this->Internal->Client.reset();
  this->Modified();
}

void vtkRewindLiveSource::Refresh() { this->Modified(); }

vtkStringArray* vtkRewindLiveSource::GetRunFiles() { return this->Internal->RunFiles; }
vtkStringArray* vtkRewindLiveSource::GetRunSteps() { return this->Internal->RunSteps; }
vtkStringArray* vtkRewindLiveSource::GetFutures() { return this->Internal->Futures; }
const char* vtkRewindLiveSource::GetServer() { return this->Internal->Server.c_str(); }

namespace {
bool is_first_process() {
  vtkMultiProcessController* c = vtkMultiProcessController::GetGlobalController();
  return !c || c->GetLocalProcessId() == 0;
}
}  // namespace

int vtkRewindLiveSource::RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector* out) {
  auto& in = *this->Internal;
  out->GetInformationObject(0)->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
  // Not before the first update (ParaView asks for information as soon as the source is
  // created, before its port is set), and only on the first process: one connection,
  // one error message, one copy of the window (the other pieces stay empty).
  in.Failed = false;
  if ((in.Armed || this->UseTimeAxis) && is_first_process()) {
    in.Armed = true;  // the time axis is wanted now: connect at once
    in.Failed = !this->FetchInformation();
  }
  SetTimes(out, this->UseTimeAxis && !in.Failed ? in.Times : std::vector<double>{});
  return 1;
}

bool vtkRewindLiveSource::FetchInformation() {
  auto& in = *this->Internal;
  const std::string contact = this->ContactFile ? this->ContactFile : "";
  in.Where = contact.empty() ? std::string(this->Host ? this->Host : "") + ":" + std::to_string(this->Port) : contact;
  try {
    if (!in.Client || !in.Client->connected()) {
      in.Client.reset();
      col::ClientOptions opt;
      opt.timeout = std::chrono::milliseconds(static_cast<long long>(this->Timeout * 1000));
      opt.name = "rewind-paraview";
      const std::string token_option = this->Token ? this->Token : "", token_file = this->TokenFile ? this->TokenFile : "";
      std::string host = this->Host ? this->Host : "", token;
      int port = this->Port;
      if (!contact.empty()) {  // the job writing the run file: its contact file says where
        const col::Contact c = col::read_contact(contact);
        host = c.host;
        port = c.port;
        in.Where = c.host + ":" + std::to_string(c.port) +
                   col::contact_hint(c, contact.ends_with(".contact") ? contact : col::contact_path(contact));
        if (token_option.empty() && token_file.empty()) token = c.token;
      }
      if (port < 1 || port > 65535) throw std::runtime_error("port " + std::to_string(port) + " is not a TCP port");
      if (token.empty()) token = col::resolve_token(token_option, token_file);
      in.Client.emplace(host, static_cast<std::uint16_t>(port), token, opt);
    }
    in.Info = in.Client->info();
    this->SetDomain(in.Info.domain_lo.data(), in.Info.domain_hi.data());
    this->SetUnits(in.Info.variables);
    const auto steps = in.Client->steps();
    in.Server = in.Client->server().server + (in.Info.live ? " (live)" : " (files)");
    in.RunFiles->Reset();
    for (const auto& f : in.Info.files) in.RunFiles->InsertNextValue(f);
    in.RunSteps->Reset();
    for (const auto& s : steps)
      for (const auto& v : {s.file, std::to_string(s.step), std::to_string(s.time), s.kind}) in.RunSteps->InsertNextValue(v);
    in.Futures->Reset();
    // The timeline File names, through its parents, for UseTimeAxis; "": the file the
    // run writes now (after a branch in the job: the branch's), else the first file.
    std::string file = this->File && *this->File ? this->File : (in.Info.files.empty() ? "" : in.Info.files.front());
    std::map<std::string, std::string> parents;
    if (in.Info.live && in.Client->offers("status")) {
      const auto status = in.Client->status();
      if (!(this->File && *this->File) && !status.file.empty()) file = status.file;
      parents[status.file] = status.parent;
      for (const auto& f : status.futures) {
        parents[f.file] = f.parent;
        for (const auto& v : {f.file, f.parent, std::string(col::to_string(f.state)), std::to_string(f.step)})
          in.Futures->InsertNextValue(v);
      }
    }
    in.Axis = rwd::paraview::live_timeline(file, steps, parents);
    in.Times.clear();
    for (const auto& a : in.Axis) in.Times.push_back(a.time);
    std::vector<std::string> names;
    for (const auto& v : in.Info.variables) names.push_back(v.name);
    rwd::paraview::offer_arrays(*this->CellArrays, names);
  } catch (const std::exception& e) {
    in.Client.reset();
    in.Server.clear();
    this->ReportError(rwd::paraview::describe_client_error(e, in.Where, this->Timeout));
    return false;
  }
  return true;
}

int vtkRewindLiveSource::RequestData(vtkInformation* pipeline_request, vtkInformationVector**, vtkInformationVector* out) {
  auto& in = *this->Internal;
  vtkInformation* info = RequestedPort(pipeline_request, out);
  auto* output = vtkMultiBlockDataSet::GetData(out, 0);
  if (!output) return 1;
  output->Initialize();
  SetAnnotation(out, "");
  const bool first_piece = !info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER()) ||
                           info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER()) == 0;
  if (!first_piece || !is_first_process()) return 1;
  if (!in.Armed) {  // the first update: connect now
    in.Armed = true;
    in.Failed = !this->FetchInformation();
  }
  if (in.Failed || !in.Client) return 1;  // reported already
  const std::string& where = in.Where;
  try {
    auto request = rwd::paraview::window_request(*this, in.Info.domain_lo, in.Info.domain_hi);
    if (request.budget == 0) request.budget = col::HandlerLimits{}.max_budget;
    request.time = this->Time && *this->Time ? this->Time : "live";
    request.file = this->File ? this->File : "";
    const bool on_axis = this->UseTimeAxis && !in.Axis.empty();
    if (on_axis) {
      const auto& shown = in.Axis[rwd::paraview::step_for_time(info, in.Times)];
      request.time = std::to_string(shown.step);
      request.file = shown.file;
    }
    const auto reply = in.Client->window(request);
    rwd::paraview::fill_output(reply, this->ReadCellTypes, in.Info, output);
    SetAnnotation(out, rwd::paraview::annotation(reply));
    // A data time only on the time axis: off it the source has no time range, and a
    // data time without one is what the Information tab showed as [1e+299, -1e+299].
    if (on_axis)  // both ports: an update of one does not execute the source again
      for (vtkDataObject* o : {static_cast<vtkDataObject*>(output), static_cast<vtkDataObject*>(vtkTable::GetData(out, 1))})
        if (o) o->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), reply.time);
  } catch (const std::exception& e) {
    if (!in.Client->connected()) in.Client.reset();
    this->ReportError(rwd::paraview::describe_client_error(e, where, this->Timeout));
    return 1;
  }
  this->ClearError();
  return 1;
}
